#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# guest-cuda.sh OUT FILE...: the CUDA programs built by nvcc (and clang-19)
# (dynamically linked, against vGPU's libcudart.so.13) and everything they
# load, as a tree to lay over the guest's initramfs (busybox and static
# programs only: no C library, no loader).  `make guest-cuda` runs it with
# the Makefile's list of programs (GUEST_CUDA) and vGPU's libraries they
# load (a FILE named lib*.so.*: a library); run-in-guest.sh and
# build-guest.sh copy OUT/root into their initramfs.
#
#   OUT/root/kselftest/vgpu/PROGRAM  the programs (debug info stripped), run
#                                    by kselftest's runner as vgpu:PROGRAM
#   OUT/root/usr/lib/vgpu-cuda/      the libraries (libcudart.so.13,
#                                    libcuda.so.1, libvgpu.so.2; stripped): the
#                                    drm backend is chosen at run time
#                                    (VGPU_BACKEND=drm); the programs find
#                                    them through LD_LIBRARY_PATH (their
#                                    RUNPATH is the host's BUILD), the
#                                    libraries each other through $ORIGIN
#   OUT/root/lib/x86_64-linux-gnu/...,  the host's (Debian 12's) shared
#   OUT/root/lib64/ld-linux-x86-64.so.2 libraries that these load, each at
#                                    the path ldd reports, and the loader
#   OUT/root/var/cache/vgpu/         a PTX compile cache the corpus
#                                    programs filled on the host
#   OUT/root/etc/vgpu/corpus-known-failures.txt  the corpus's known
#                                    failures (a FILE named
#                                    known-failures.txt), for
#                                    run-in-guest.sh's VGPU_CORPUS_KNOWN
#   OUT/programs.txt                 the programs' names, one a line
#
# The closure is what ldd lists for each program and library (DT_NEEDED,
# recursively, resolved as the host's loader resolves it); a library ldd
# cannot find fails the build.  Nothing is fetched: the libraries are the
# host's, which built and ran the same programs.
set -euo pipefail

(($# >= 2)) || { echo "usage: $0 OUT FILE..." >&2; exit 2; }
out=$1
shift
tmp=$out.tmp
root=$tmp/root
libdir=/usr/lib/vgpu-cuda
rm -rf "$tmp"
mkdir -p "$root$libdir" "$root/kselftest/vgpu"

: >"$tmp/programs.txt"
for f; do
	case $(basename "$f") in
	lib*.so.*) strip --strip-debug -o "$root$libdir/$(basename "$f")" "$f" ;;
	known-failures.txt)
		mkdir -p "$root/etc/vgpu"
		cp "$f" "$root/etc/vgpu/corpus-known-failures.txt"
		;;
	*)
		strip --strip-debug -o "$root/kselftest/vgpu/$(basename "$f")" "$f"
		basename "$f" >>"$tmp/programs.txt"
		;;
	esac
done

# A PTX compile cache for the guest (libvgpu's: keyed by the library's
# GNU build-id, which strip keeps): each corpus program run once here, on
# the sim backend, fills it, so that the guest (under TCG) does not compile
# the same PTX again in every lane.  run-in-guest.sh points the programs'
# VGPU_CACHE_PATH at it.  A program that fails here only leaves its
# entries out (the guest compiles those).  Once: not under the loops a
# developer asks of the guest's corpus (VGPU_CORPUS_SCHEDULES and the like).
cache=$root/var/cache/vgpu
mkdir -p "$cache"
for f; do
	case $(basename "$f") in
	test_corpus_*)
		env -u VGPU_CORPUS_SCHEDULES -u VGPU_CORPUS_REPEAT -u VGPU_CORPUS_ONLY \
			-u VGPU_RANDOM_SCHEDULE VGPU_BACKEND=sim VGPU_CACHE_PATH=$cache \
			timeout 600 "$f" >/dev/null 2>&1 || true ;;
	esac
done

# ldd FILE: "NAME => PATH (ADDR)", "PATH (ADDR)" for the loader, "NAME =>
# not found"; our libraries resolve to the staged copies (left out)
for f in "$root$libdir"/* "$root"/kselftest/vgpu/*; do
	LD_LIBRARY_PATH=$root$libdir ldd "$f" >"$tmp/ldd"
	if grep -q 'not found' "$tmp/ldd"; then
		echo "guest-cuda: ${f#"$root"}: $(grep 'not found' "$tmp/ldd" | tr -s ' \t\n' ' ')" >&2
		exit 1
	fi
	awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' "$tmp/ldd"
done | sort -u | while read -r lib; do
	[[ $lib == "$root"/* ]] && continue
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
[[ -e $root/lib64/ld-linux-x86-64.so.2 ]] ||
	{ echo "guest-cuda: ldd named no /lib64/ld-linux-x86-64.so.2" >&2; exit 1; }

rm -rf "$out"
mv "$tmp" "$out"
echo "guest-cuda: $(wc -l <"$out/programs.txt") programs, $(find "$out/root" -type f | wc -l) files," \
	"$(du -sh "$out/root" | cut -f1) in ${out}/root"
