#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# build-qemu.sh: build build/qemu-build/qemu-system-x86_64 with the vgpu-pci
# device grafted in.  `make qemu` runs it; `make check`, `make run` and
# `make bench` run it when the binary is missing.
#
#   1. Install the build dependencies from Debian's archive (idempotent).
#   2. Obtain QEMU's source from Debian's source package (adding a
#      bookworm deb-src entry when none exists) and unpack it with
#      Debian's patches (dpkg-source -x) into build/qemu-src.  Once.
#   3. Graft: copy qemu-device/*.{c,h}, qemu-device/core/*.{c,h} and the
#      uapi headers they include into hw/misc/vgpu/ of that tree, with a
#      meson.build, Kconfig and trace-events there, and hook the directory
#      into hw/misc/{Kconfig,meson.build} and the trace-event list the way
#      hw/misc/edu.c is wired.  Only files whose content changed are
#      copied, so ninja recompiles only what changed.
#   4. Configure (once, or when the configure line changes) into
#      build/qemu-build with ccache, and ninja qemu-system-x86_64.
#
# The project's repository holds none of QEMU's code: build/ is ignored.
#
# Environment: VGPU_QEMU_JOBS (ninja -j, default: number of CPUs);
# VGPU_CORE_REV=REV grafts the core (qemu-device/core, uapi/vgpu_isa*.h)
# as committed at git revision REV instead of the working tree.
#
# VGPU_QEMU_FLAVOUR=fuzz builds instead build/qemu-fuzz/qemu-fuzz-x86_64:
# the same tree configured with clang-19, --enable-fuzzing (libFuzzer) and
# --enable-sanitizers (ASan, UBSan; not clang's -fsanitize=function, which
# QEMU 7.2's function-pointer casts trip everywhere, as later QEMU also turns
# off), with the device fuzzer grafted into
# tests/qtest/fuzz/vgpu (qemu-device/fuzz/vgpu-fuzz.c and what it uses of
# tests/qtest/; its known-good kernel assembled by build/bin/vgpu-as, so
# `make` first).  `make fuzz-device` runs it.
#
# VGPU_QEMU_FLAVOUR=asan builds build/qemu-asan/qemu-system-x86_64: the
# plain configuration plus --enable-sanitizers (gcc's ASan and UBSan).
# `make check-device-asan` runs the device qtests against it (not part of
# make check: a cold build of it is long).
set -euo pipefail

cd "$(dirname "$0")/.."
top=$PWD
src=$top/build/qemu-src
bld=$top/build/qemu-build
dl=$top/build/qemu-dl
graft=$src/hw/misc/vgpu

log() { echo "build-qemu: $*"; }

# One run at a time through steps 1 to 3 (make check, make run and a
# developer may overlap), and one per flavour through step 4: the source
# tree is shared, each flavour's build directory its own, so that a
# flavour already built is not held up by another's build (make check
# builds QEMU for fuzzing in the background while its device lanes run).
mkdir -p "$top/build"
exec 9>"$top/build/.build-qemu.lock"
if ! flock -n 9; then
	log "waiting for another run to finish"
	flock 9
fi

sudo=()
if ((EUID != 0)); then
	sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive

flavour=${VGPU_QEMU_FLAVOUR:-}
case $flavour in
'') ;;
fuzz) bld=$top/build/qemu-fuzz ;;
asan) bld=$top/build/qemu-asan ;;
*) log "VGPU_QEMU_FLAVOUR=$flavour: unknown (fuzz, asan or nothing)"; exit 2 ;;
esac

# ---- 1. dependencies ----
# seabios and qemu-system-data: the firmware and option ROMs the built
# QEMU loads (-L /usr/share/seabios -L /usr/share/qemu) in the device
# qtests, which run before anything builds the guest; a fresh machine
# without them fails every qtest with "could not load PC BIOS".
packages=(build-essential dpkg-dev ninja-build meson python3-venv
	libglib2.0-dev libpixman-1-dev libfdt-dev zlib1g-dev pkg-config
	flex bison ccache seabios qemu-system-data)
[[ $flavour == fuzz ]] && packages+=(clang-19 libclang-rt-19-dev)
scripts/apt-install.sh --tag build-qemu "${packages[@]}"

# ---- 2. source ----
if [[ ! -f $src/.vgpu-unpacked ]]; then
	if ! grep -rqsE '^[[:space:]]*(deb-src[[:space:]].*bookworm|Types:.*deb-src)' \
		/etc/apt/sources.list /etc/apt/sources.list.d/; then
		log "adding a bookworm deb-src entry"
		"${sudo[@]+"${sudo[@]}"}" tee /etc/apt/sources.list.d/vgpu-deb-src.sources >/dev/null <<-EOF
			# Added by vGPU scripts/build-qemu.sh: source packages (apt-get source qemu)
			Types: deb-src
			URIs: http://deb.debian.org/debian
			Suites: bookworm bookworm-updates
			Components: main
			Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		EOF
	fi
	"${sudo[@]+"${sudo[@]}"}" apt-get update -q
	rm -rf "$dl" "$src"
	mkdir -p "$dl"
	log "downloading QEMU's Debian source package"
	(cd "$dl" && apt-get source --download-only -q qemu)
	dsc=$(ls "$dl"/qemu_*.dsc | head -n 1)
	log "unpacking $(basename "$dsc") with Debian's patches"
	dpkg-source -x "$dsc" "$src" >/dev/null
	touch "$src/.vgpu-unpacked"
fi

# ---- 3. graft ----
mkdir -p "$graft"
changed=0
# install_if_changed SRC DST: copy only when the content differs, so that
# unchanged files keep their timestamps and are not recompiled.
install_if_changed() {
	if ! cmp -s "$1" "$2"; then
		cp "$1" "$2.tmp" || exit 1
		mv "$2.tmp" "$2"
		changed=1
	fi
}
write_if_changed() { # DST, content on stdin
	local tmp
	tmp=$(mktemp)
	cat >"$tmp"
	install_if_changed "$tmp" "$1"
	rm -f "$tmp"
}

shopt -s nullglob
glue_c=(qemu-device/*.c)
want=()
for f in qemu-device/*.[ch] uapi/vgpu_hw*.h; do
	install_if_changed "$f" "$graft/$(basename "$f")"
	want+=("$(basename "$f")")
done
# The core and the instruction set: from the working tree (what the host
# runner builds), or from git revision $VGPU_CORE_REV when set.
core_files=(qemu-device/core/*.[ch] uapi/vgpu_isa.h uapi/vgpu_isa_table.h)
if [[ -n ${VGPU_CORE_REV:-} ]]; then
	mapfile -t core_files < <(git ls-tree --name-only "$VGPU_CORE_REV" \
		qemu-device/core/ uapi/vgpu_isa.h uapi/vgpu_isa_table.h |
		grep -E '\.[ch]$')
	rev_tmp=$(mktemp -d)
	trap 'rm -rf "$rev_tmp"' EXIT
fi
core_c=()
for f in "${core_files[@]}"; do
	b=$(basename "$f")
	if [[ -n ${VGPU_CORE_REV:-} ]]; then
		git show "$VGPU_CORE_REV:$f" >"$rev_tmp/$b"
		install_if_changed "$rev_tmp/$b" "$graft/$b"
	else
		install_if_changed "$f" "$graft/$b"
	fi
	want+=("$b")
	[[ $b == *.c ]] && core_c+=("$b")
done
install_if_changed qemu-device/trace-events "$graft/trace-events"
want+=(trace-events meson.build Kconfig trace.h)
# Remove files that no longer exist in the project.
for f in "$graft"/*; do
	b=$(basename "$f")
	if [[ " ${want[*]} " != *" $b "* ]]; then
		rm -f "$f"
		changed=1
	fi
done

hook() { # FILE LINE: append LINE to FILE once
	if ! grep -qxF "$2" "$1"; then
		printf '%s\n' "$2" >>"$1"
		changed=1
	fi
}

# The device fuzzer, into tests/qtest/fuzz/vgpu (built only where QEMU is
# configured with --enable-fuzzing: that meson.build stops before it
# otherwise).  vgpu_dev.c without its assembler part (VGPU_DEV_NO_ASM).
fz=$src/tests/qtest/fuzz/vgpu
mkdir -p "$fz"
fz_want=(meson.build vgpu_dev_noasm.c vgpu-fuzz-kernel.h)
for f in qemu-device/fuzz/*.c tests/qtest/vgpu_dev.[ch] tests/qtest/qtest_client.h \
	tests/qtest/qtest_pci.c tests/fuzz/wellformed.h libvgpu/vgpu_asm.h uapi/vgpu_hw*.h \
	uapi/vgpu_isa.h uapi/vgpu_isa_table.h; do
	install_if_changed "$f" "$fz/$(basename "$f")"
	fz_want+=("$(basename "$f")")
done
for f in "$fz"/*; do
	[[ " ${fz_want[*]} " == *" $(basename "$f") "* ]] || { rm -f "$f"; changed=1; }
done
printf '%s\n' "/* Generated by vGPU scripts/build-qemu.sh: vgpu_dev.c, no assembler. */" \
	"#define VGPU_DEV_NO_ASM" '#include "vgpu_dev.c"' | write_if_changed "$fz/vgpu_dev_noasm.c"
if [[ $flavour == fuzz ]]; then
	[[ -x $top/build/bin/vgpu-as ]] || { log "build/bin/vgpu-as missing: run make first"; exit 1; }
	kg=$(mktemp)
	"$top/build/bin/vgpu-as" qemu-device/fuzz/known-good.vgs -o "$kg"
	{
		echo "/* Generated by vGPU scripts/build-qemu.sh from qemu-device/fuzz/known-good.vgs. */"
		echo "static const uint8_t vgpu_fuzz_obj[] = {"
		od -An -v -tx1 "$kg" | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1, /g; s/^/   /; s/ *$//'
		echo "};"
	} | write_if_changed "$fz/vgpu-fuzz-kernel.h"
	rm -f "$kg"
elif [[ ! -f $fz/vgpu-fuzz-kernel.h ]]; then
	echo "static const uint8_t vgpu_fuzz_obj[1];" | write_if_changed "$fz/vgpu-fuzz-kernel.h"
fi
printf '%s\n' "# Generated by vGPU scripts/build-qemu.sh; do not edit." \
	"specific_fuzz_ss.add(when: 'CONFIG_VGPU_PCI', if_true: files(" \
	"  'vgpu-fuzz.c', 'qts-inproc.c', 'vgpu_dev_noasm.c', 'qtest_pci.c'))" |
	write_if_changed "$fz/meson.build"
hook "$src/tests/qtest/fuzz/meson.build" "subdir('vgpu')"

names() { local f; for f in "$@"; do printf "  '%s',\n" "$(basename "$f")"; done; }
# The core is built as its own static library at -O3, as the host runner
# builds it (Makefile: the lane loops vectorise); the glue with QEMU's flags.
write_if_changed "$graft/meson.build" <<-EOF
	# Generated by vGPU scripts/build-qemu.sh; do not edit.
	vgpu_core_lib = static_library('vgpu-core',
	$(names "${core_c[@]}")
	  c_args: ['-O3'],
	  build_by_default: false)
	softmmu_ss.add(when: 'CONFIG_VGPU_PCI', if_true: [files(
	$(names "${glue_c[@]}")
	), declare_dependency(link_with: vgpu_core_lib)])
EOF
write_if_changed "$graft/Kconfig" <<-EOF
	config VGPU_PCI
	    bool
	    default y if PCI_DEVICES
	    depends on PCI && MSI_NONBROKEN
EOF
write_if_changed "$graft/trace.h" <<-EOF
	#include "trace/trace-hw_misc_vgpu.h"
EOF

hook "$src/hw/misc/Kconfig" "source vgpu/Kconfig"
hook "$src/hw/misc/meson.build" "subdir('vgpu')"
if ! grep -q "'hw/misc/vgpu'" "$src/meson.build"; then
	sed -i "s|^\(\s*\)'hw/misc',$|&\n\1'hw/misc/vgpu',|" "$src/meson.build"
	grep -q "'hw/misc/vgpu'" "$src/meson.build" || {
		log "cannot hook hw/misc/vgpu into trace_events_subdirs"
		exit 1
	}
fi
((changed)) && log "grafted qemu-device/ into $graft"

# ---- 4. configure and build ----
exec 9>&-
exec 9>"$top/build/.build-qemu-${flavour:-plain}.lock"
if ! flock -n 9; then
	log "waiting for another build of ${flavour:-the plain} flavour"
	flock 9
fi
conf=(--target-list=x86_64-softmmu --without-default-features --enable-kvm
	--enable-tcg --enable-fdt=system --disable-docs --disable-werror
	--enable-trace-backends=log --cc="ccache gcc" --host-cc=gcc)
target=qemu-system-x86_64
if [[ $flavour == fuzz ]]; then
	conf=(--target-list=x86_64-softmmu --without-default-features --enable-tcg
		--enable-fdt=system --disable-docs --disable-werror
		--enable-trace-backends=log --enable-fuzzing --enable-sanitizers
		--cc="ccache clang-19" --cxx="ccache clang++-19" --host-cc=clang-19
		--extra-cflags=-fno-sanitize=function)
	target=qemu-fuzz-x86_64
elif [[ $flavour == asan ]]; then
	# qemu-system-x86_64 with ASan and UBSan (gcc), for the device
	# qtests: make check-device-asan
	conf+=(--enable-sanitizers)
fi
if [[ ! -f $bld/build.ninja || $(cat "$bld/.vgpu-configure" 2>/dev/null) != "${conf[*]}" ]]; then
	log "configuring"
	rm -rf "$bld"
	mkdir -p "$bld"
	(cd "$bld" && "$src/configure" "${conf[@]}") >"$top/build/qemu-configure.log" 2>&1 || {
		tail -n 30 "$top/build/qemu-configure.log"
		exit 1
	}
	echo "${conf[*]}" >"$bld/.vgpu-configure"
fi
# outside the clone, so that a fresh clone (CI) compiles only what changed:
# paths under the clone are hashed relative to it (CCACHE_BASEDIR), and the
# build directory's own path is left out of the hash (CCACHE_NOHASHDIR;
# ccache adds it under -g by default), or every clone in a new directory
# misses every object (seen: 30 hits in 6054 calls over two CI runs)
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vgpu/ccache}
export CCACHE_BASEDIR=$top CCACHE_NOHASHDIR=true
log "building $target"
if ! ninja -C "$bld" -j "${VGPU_QEMU_JOBS:-$(nproc)}" "$target" 2>&1 |
	{ grep -vE '^\[[0-9]+/[0-9]+\] (Compiling|Linking|Generating)' || true; }; then
	log "build failed"
	exit 1
fi
log "$bld/$target is up to date"
