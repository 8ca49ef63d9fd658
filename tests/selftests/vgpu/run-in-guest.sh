#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# run-in-guest.sh: boot the guest (kernel and modules from
# scripts/build-guest.sh) with vgpu.ko and the selftests in an initramfs of
# its own (build/selftests/initramfs.cpio.gz), load drm, drm_shmem_helper,
# gpu-sched and vgpu, run ./vgpu_test, and print "N passed, N failed".
# Fails on any test failure and on WARN/BUG/oops in the guest's log.
# With --bench, runs ./vgpu_bench instead (make bench-guest) and fails
# when it fails or on WARN/BUG/oops.
# The device runs SMs on 2 host threads (threads=2), so that queues run
# concurrently (reset.completed_job_not_rerun needs it).
# Environment: VGPU_TIMEOUT_MS (module timeout_ms), VGPU_GUEST_TIMEOUT (s).
set -euo pipefail
prog=vgpu_test
[[ ${1:-} == --bench ]] && prog=vgpu_bench
cd "$(dirname "$0")/../../.."
top=$PWD
out=$top/build/selftests
guest=$top/build/guest
qemu=$top/build/qemu-build/qemu-system-x86_64

[[ -f $guest/vmlinuz && -d $guest/modules ]] || scripts/build-guest.sh
[[ -f build/module/vgpu.ko ]] || scripts/build-module.sh
[[ -x $out/$prog ]] || make -C tests/selftests/vgpu
kver=$(cat "$guest/kernel-version")

root=$out/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,lib/modules/$kver/extra}
cp /bin/busybox "$root/bin/busybox"
# the DRM modules and their dependencies, from the guest kernel's tree
mkdir -p "$out/modroot/lib/modules"
ln -sfn "$guest/modules" "$out/modroot/lib/modules/$kver"
[[ -f $guest/modules/modules.dep ]] || depmod -b "$out/modroot" "$kver"
for m in drm drm_shmem_helper gpu-sched; do
	modprobe -d "$out/modroot" -S "$kver" --show-depends "$m" |
		awk '$1 == "insmod" { print $2 }'
done | sort -u | while read -r f; do
	rel=${f#"$out/modroot/lib/modules/$kver/"}
	mkdir -p "$root/lib/modules/$kver/$(dirname "$rel")"
	cp "$f" "$root/lib/modules/$kver/$rel"
done
cp "$guest/modules/modules.order" "$guest/modules/modules.builtin"* "$root/lib/modules/$kver/" 2>/dev/null || true
cp build/module/vgpu.ko "$root/lib/modules/$kver/extra/"
depmod -b "$root" "$kver"
cp "$out/$prog" "$root/bin/"
cat > "$root/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
modprobe vgpu timeout_ms=${VGPU_TIMEOUT_MS:-30000} || echo "VGPU-GUEST: modprobe failed"
cd /tmp && /bin/$prog; echo "VGPU-SELFTEST-RC: \$?"
cat /sys/kernel/debug/dri/*/queues 2>/dev/null
echo "VGPU-GUEST: unload"; rmmod vgpu && echo "VGPU-GUEST: unloaded"
dmesg | grep -E "WARNING|BUG|Oops|Call Trace" && echo "VGPU-GUEST: KERNEL-ISSUE"
poweroff -f
INIT
chmod 755 "$root/init"
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 > "$out/initramfs.cpio.gz"

log=$out/guest${prog#vgpu_test}.log
rc=0
timeout "${VGPU_GUEST_TIMEOUT:-600}" "$qemu" -M q35 -nodefaults -display none -m 1G -smp 2 \
	-no-reboot -L /usr/share/qemu -L /usr/share/seabios -accel tcg \
	-kernel "$guest/vmlinuz" -initrd "$out/initramfs.cpio.gz" \
	-device vgpu-pci,threads=2 -serial stdio -append "console=ttyS0 panic=-1 quiet" \
	</dev/null | tee "$log" || rc=$?
if [[ $prog == vgpu_bench ]]; then
	bad=0
	grep -q 'VGPU-SELFTEST-RC: 0' "$log" || { echo "run-in-guest: vgpu_bench failed"; bad=1; }
	grep -q 'VGPU-GUEST: KERNEL-ISSUE' "$log" &&
		{ echo "run-in-guest: WARN/BUG/oops in the guest kernel log"; bad=1; }
	exit $bad
fi
pass=$(grep -c '^ok ' "$log" || true)
fail=$(grep -c '^not ok ' "$log" || true)
if grep -q 'VGPU-GUEST: KERNEL-ISSUE' "$log"; then
	echo "run-in-guest: WARN/BUG/oops in the guest kernel log"
	fail=$((fail + 1))
fi
if ! grep -q 'VGPU-SELFTEST-RC:' "$log"; then
	echo "run-in-guest: the suite did not finish (QEMU status $rc)"
	fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
((fail == 0))
