#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bundle.sh WORK OUT: a bundle that runs corpus tests on the drm backend
# in TCG guests on another x86-64 Linux machine (the accelerator machine's
# 16 cores: run.sh there).  WORK is a guest work directory that
# tests/selftests/vgpu/run-in-guest.sh made (build/selftests/TAG: its
# initramfs/ holds vgpu.ko, the kselftests and the CUDA programs); its
# init is patched to run, instead of the kselftests, the corpus units
# named on the kernel command line, vgpu_units=PROG:TEST,PROG:TEST,...,
# each under the random schedules of seeds 1..100 (vgpu_sched=N on the
# command line: 1..N), VGPU_CORPUS_SCHEDULES of the
# corpus harness, tests/corpus/corpus.h).  OUT gets the initramfs (xz),
# the guest kernel, this tree's QEMU with its shared libraries and loader
# (it runs through the bundled ld.so, whatever the machine's libraries)
# and its firmware: about 40 MB, under the device tool's 64 MiB carry.
set -euo pipefail
work=${1:?usage: bundle.sh WORK OUT}
out=${2:?usage: bundle.sh WORK OUT}
top=$(cd "$(dirname "$0")/../../.." && pwd)
rm -rf "$out"
mkdir -p "$out"/{lib,share,bin}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
cp -a "$work/initramfs/." "$root/"
# the corpus line of the init: the units of the command line instead
awk '
/run_kselftest\.sh/ && /test_corpus_/ {
	# the environment run-in-guest.sh gives the corpus programs
	env = substr($0, 1, index($0, "./run_kselftest.sh") - 1)
	gsub(/VGPU_CORPUS_SCHEDULES=[0-9]* /, "", env)
	print "n=$(sed -n \"s/.*vgpu_sched=\\([0-9]*\\).*/\\1/p\" /proc/cmdline)"
	print "for u in $(sed -n \"s/.*vgpu_units=\\([^ ]*\\).*/\\1/p\" /proc/cmdline | tr , \" \"); do"
	print "\tp=${u%%:*}; t=${u#*:}"
	print "\techo \"VGPU-UNIT: $p $t\""
	print "\t(cd /kselftest/vgpu && " env "VGPU_CORPUS_SCHEDULES=${n:-100} VGPU_CORPUS_ONLY=$t ./$p)"
	print "done"
	next
}
/run_kselftest\.sh/ { print "true"; next }
{ print }' "$work/initramfs/init" >"$root/init"
chmod 755 "$root/init"
grep -q vgpu_units "$root/init" || { echo "bundle.sh: no corpus line in $work/initramfs/init" >&2; exit 1; }
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | xz -T2 --check=crc32 -6 >"$out/initramfs.cpio.xz"
cp "$top/build/guest/vmlinuz" "$out/"
strip -o "$out/bin/qemu-system-x86_64" "$top/build/qemu-build/qemu-system-x86_64"
xz -T2 -6 "$out/bin/qemu-system-x86_64" # run.sh unpacks it
for l in $(ldd "$top/build/qemu-build/qemu-system-x86_64" | awk '$3 ~ /^\// { print $3 }') \
	/lib64/ld-linux-x86-64.so.2; do
	cp -L "$l" "$out/lib/"
done
# the firmware a q35 TCG guest reads: SeaBIOS and the option ROMs
mkdir -p "$out/share/qemu" "$out/share/seabios"
for f in bios-256k.bin kvmvapic.bin linuxboot_dma.bin multiboot_dma.bin pvh.bin vgabios-stdvga.bin efi-e1000e.rom; do
	for d in /usr/share/qemu /usr/share/seabios; do
		[[ -e $d/$f ]] && cp -L "$d/$f" "$out/share/${d##*/}/"
	done
done
cp "$top/docs/measurements/drm-schedules-2026-11-30/run.sh" "$out/"
du -sh "$out"
