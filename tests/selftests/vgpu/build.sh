#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# build.sh: build and install the vgpu kselftests the way the kernel's own
# are, inside linux-source-6.12's tools/testing/selftests.  `make -C
# tests/selftests/vgpu` runs this (the Makefile, outside the kernel tree).
#
#  1. tools/testing/selftests (its Makefile, lib.mk, kselftest_harness.h,
#     kselftest.h, run_kselftest.sh, kselftest/) and scripts/subarch.include
#     (the selftests Makefile includes it) come from Debian's
#     /usr/src/linux-source-6.12.tar.xz (apt-get install linux-source-6.12
#     when missing) into build/ksft/<package version>/, once per version;
#     nothing of it is ever copied into the repository.
#  2. tests/selftests/vgpu is grafted in as tools/testing/selftests/vgpu:
#     a directory of symbolic links to this directory's files (not a link
#     to the directory: lib.mk is `include ../lib.mk`, and make resolves ..
#     from the physical directory).
#  3. make -C .../tools/testing/selftests TARGETS=vgpu          (build)
#     make -C .../tools/testing/selftests TARGETS=vgpu install
#          KSFT_INSTALL_PATH=build/selftests/install
#     The installed tree: run_kselftest.sh, kselftest-list.txt,
#     kselftest/runner.sh and friends, vgpu/ with vgpu_test, test_libvgpu
#     (run by run_kselftest.sh), vgpu_bench (installed, not run), config
#     and settings.  run-in-guest.sh puts it in the guest's initramfs.
#  4. build/selftests/{vgpu_test,test_libvgpu,vgpu_bench,...} link to the
#     installed programs (scripts/build-guest.sh puts them in the
#     interactive guest).
#
# libvgpu.a (build/libvgpu.a) is brought up to date by the kselftest
# Makefile itself, through a sub-make of the top-level Makefile.
# Extra arguments are passed to both make runs (V=1, for one).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd -P)
top=$(cd "$here/../../.." && pwd -P)
out=$top/build/selftests
install=$out/install
log() { echo "selftests: $*" >&2; }

# what the kselftest build needs: the source, rsync (lib.mk's install),
# static libdrm (libdrm-dev), pkg-config, xz
tarball=/usr/src/linux-source-6.12.tar.xz
"$top/scripts/apt-install.sh" --tag selftests linux-source-6.12 rsync libdrm-dev pkg-config xz-utils
[[ -f $tarball ]] || { log "no $tarball (linux-source-6.12)"; exit 1; }
ver=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || true)
[[ -n $ver ]] || ver=$(stat -c %Y "$tarball")
ver=${ver//[^A-Za-z0-9.+~-]/_}

mkdir -p "$top/build/ksft"
# one build at a time (make check-guest and make check-guest-debug, or a
# developer beside them, may overlap)
exec 9>"$top/build/ksft/.lock"
flock 9

src=$top/build/ksft/$ver
ksft=$src/tools/testing/selftests
if [[ ! -f $src/.extracted ]]; then
	log "tools/testing/selftests of linux-source-6.12 $ver into ${src#"$top/"}"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	p=linux-source-6.12
	# -m: stamped with the time of extraction, so that what was built
	# against an older version is rebuilt
	tar -xf "$tarball" -C "$src.tmp" -m --strip-components=1 \
		$p/tools/testing/selftests/Makefile \
		$p/tools/testing/selftests/lib.mk \
		$p/tools/testing/selftests/kselftest_harness.h \
		$p/tools/testing/selftests/kselftest.h \
		$p/tools/testing/selftests/run_kselftest.sh \
		$p/tools/testing/selftests/kselftest \
		$p/scripts/subarch.include
	mv "$src.tmp" "$src"
	touch "$src/.extracted"
	# older versions go
	for d in "$top"/build/ksft/*/; do
		[[ ${d%/} == "$src" ]] || rm -rf "${d%/}"
	done
fi

# the graft: one link per file, made afresh (files come and go)
graft=$ksft/vgpu
mkdir -p "$graft"
find "$graft" -maxdepth 1 -type l -delete
for f in "$here"/*; do
	[[ -f $f ]] && ln -s "$f" "$graft/"
done

mk=(make --no-print-directory -C "$ksft" TARGETS=vgpu FORCE_TARGETS=1 "$@")
"${mk[@]}"
# install copies everything again: only when something is newer
stamp=$install/.installed
if [[ ! -f $stamp || -n $(find -L "$graft" -mindepth 1 -maxdepth 1 -newer "$stamp" -print -quit) ]]; then
	rm -rf "$install"
	"${mk[@]}" install KSFT_INSTALL_PATH="$install" >/dev/null
	grep -qx 'vgpu:vgpu_test' "$install/kselftest-list.txt" ||
		{ log "install made no kselftest-list.txt with vgpu:vgpu_test"; exit 1; }
	touch "$stamp"
fi
# shellcheck source=programs.sh
. "$here/programs.sh"
for p in $VGPU_KSFT_PROGS $VGPU_LIB_PROGS $VGPU_PTX_PROGS vgpu_bench vgpu_fuzz; do
	ln -sfn "install/vgpu/$p" "$out/$p"
done
