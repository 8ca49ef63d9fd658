#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# run-in-guest.sh: boot the guest (kernel and modules from
# scripts/build-guest.sh) with vgpu.ko and the selftests in an initramfs of
# its own (build/selftests/initramfs.cpio.gz), load drm, drm_shmem_helper,
# gpu-sched and vgpu, run ./vgpu_test (the kselftests, counted by their TAP
# "ok N"/"not ok N" lines), then ./test_libvgpu (tests/unit/test_libvgpu.c:
# the library on the drm backend, counted by its "N passed, N failed"
# line), and print the sum as "N passed, N failed".
# Fails on any test failure and on WARN/BUG/oops in the guest's log.
#
# The guest has VGPU_GUEST_DEVICES vgpu-pci devices (default 2; 1 with
# --bench).  With
# VGPU_GUEST_ISOLATE=1 (the default) vgpu.ko drives only the first while the
# kselftests run: the others carry driver_override "none", because the
# suite assumes a single device (it unbinds "the" device and expects no
# vgpu device left, reads "the" debugfs directory).  Then every device is
# bound and test_libvgpu runs with VGPU_TEST_DEVICES set to their number,
# so that its dma-buf and several-device tests use two real devices.
# With --bench, runs ./vgpu_bench instead (make bench-guest) and fails
# when it fails or on WARN/BUG/oops.
# The device runs SMs on 2 host threads (threads=2), so that queues run
# concurrently (reset.completed_job_not_rerun needs it).
# Environment: VGPU_TIMEOUT_MS (module timeout_ms, default 30000),
# VGPU_GUEST_TIMEOUT (s), VGPU_GUEST_DIR (the guest kernel: vmlinuz,
# modules/, kernel-version; default build/guest, Debian's 6.12;
# build/guest-debug is the debug kernel), VGPU_MODULE (default
# build/module/vgpu.ko), VGPU_GUEST_MEM (default 1G), VGPU_TIMEOUT_SCALE
# (default 1: multiplies the driver's and the tests' job timeouts, for a
# slower kernel).
#
# Besides WARN/BUG/oops the guest's log is searched for every report of
# the debug kernel's checkers (lockdep, KASAN, KFENCE, DEBUG_OBJECTS,
# list corruption, refcount, sleeping in atomic context); where kmemleak
# exists it scans after the unload and any leak it reports fails the run.
# Where the module has KUnit suites, their KTAP results (debugfs) are
# counted with Debian's kunit.py parse (scripts/kunit-count.sh).
set -euo pipefail
prog=vgpu_test
[[ ${1:-} == --bench ]] && prog=vgpu_bench
cd "$(dirname "$0")/../../.."
top=$PWD
out=$top/build/selftests
guest=$top/${VGPU_GUEST_DIR:-build/guest}
ko=$top/${VGPU_MODULE:-build/module/vgpu.ko}
mem=${VGPU_GUEST_MEM:-1G}
scale=${VGPU_TIMEOUT_SCALE:-1}
timeout_ms=$(( ${VGPU_TIMEOUT_MS:-30000} * scale ))
qemu=$top/build/qemu-build/qemu-system-x86_64

[[ -f $guest/vmlinuz && -d $guest/modules ]] || scripts/build-guest.sh
[[ -f $ko ]] || scripts/build-module.sh
[[ -x $out/$prog && -x $out/test_libvgpu ]] || make -C tests/selftests/vgpu
ndev=${VGPU_GUEST_DEVICES:-2}
[[ $prog == vgpu_bench ]] && ndev=${VGPU_GUEST_DEVICES:-1}
isolate=${VGPU_GUEST_ISOLATE:-1}
kver=$(cat "$guest/kernel-version")

root=$out/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,lib/modules/$kver/extra}
cp /bin/busybox "$root/bin/busybox"
# the DRM modules and their dependencies, from the guest kernel's tree
mkdir -p "$out/modroot/lib/modules"
ln -sfn "$guest/modules" "$out/modroot/lib/modules/$kver"
[[ -f $guest/modules/modules.dep ]] || depmod -b "$out/modroot" "$kver"
for m in drm drm_shmem_helper gpu-sched drm_exec drm_gpuvm; do
	modprobe -d "$out/modroot" -S "$kver" --show-depends "$m" |
		awk '$1 == "insmod" { print $2 }'
done | sort -u | while read -r f; do
	rel=${f#"$out/modroot/lib/modules/$kver/"}
	mkdir -p "$root/lib/modules/$kver/$(dirname "$rel")"
	cp "$f" "$root/lib/modules/$kver/$rel"
done
cp "$guest/modules/modules.order" "$guest/modules/modules.builtin"* "$root/lib/modules/$kver/" 2>/dev/null || true
cp "$ko" "$root/lib/modules/$kver/extra/vgpu.ko"
depmod -b "$root" "$kver"
cp "$out/$prog" "$root/bin/"
if [[ $prog == vgpu_test ]]; then
	cp "$out/test_libvgpu" "$root/bin/"
fi
# every checker's report (the debug kernel's) and WARN/BUG/oops
kernel_issues='WARNING|BUG|Oops|Call Trace|possible circular locking|possible recursive locking|inconsistent lock state|lock held when returning|DEBUG_LOCKS_WARN_ON|suspicious RCU usage|ODEBUG:|list_add corruption|list_del corruption|refcount_t:|KASAN|KFENCE|sleeping function called from invalid context|scheduling while atomic'
cat > "$root/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
# the vgpu-pci devices after the first: no driver during the kselftests
others=
for d in /sys/bus/pci/devices/*; do
	[ "\$(cat \$d/vendor)" = 0x7690 ] && others="\$others \${d##*/}"
done
others=\$(echo \$others | cut -s -d' ' -f2-)
if [ $isolate = 1 ]; then
	for d in \$others; do echo none > /sys/bus/pci/devices/\$d/driver_override; done
fi
export VGPU_TIMEOUT_SCALE=$scale
# which checkers this kernel has (the debug kernel: all of them)
c=
[ -e /proc/lockdep ] && c="\$c lockdep"
dmesg | grep -q "KernelAddressSanitizer initialized" && c="\$c kasan"
[ -d /sys/kernel/debug/kfence ] && c="\$c kfence"
[ -f /sys/kernel/debug/kmemleak ] && c="\$c kmemleak"
[ -f /sys/kernel/debug/debug_objects/stats ] && c="\$c debug_objects"
[ -d /sys/kernel/debug/failslab ] && c="\$c failslab"
[ -d /sys/kernel/debug/kunit ] && c="\$c kunit"
echo "VGPU-GUEST: kernel \$(uname -r), checkers:\${c:- none}"
modprobe vgpu timeout_ms=$timeout_ms || echo "VGPU-GUEST: modprobe failed"
if [ -d /sys/kernel/debug/kunit ]; then
	echo "VGPU-KUNIT-BEGIN"
	for r in /sys/kernel/debug/kunit/vgpu*/results; do [ -f "\$r" ] && cat "\$r"; done
	echo "VGPU-KUNIT-END"
fi
cd /tmp && /bin/$prog; echo "VGPU-SELFTEST-RC: \$?"
if [ -x /bin/test_libvgpu ]; then
	for d in \$others; do
		echo > /sys/bus/pci/devices/\$d/driver_override
		echo \$d > /sys/bus/pci/drivers_probe
	done
	echo "VGPU-LIBTEST: \$(ls /sys/bus/pci/drivers/vgpu | grep -c :) vgpu device(s) bound"
	VGPU_BACKEND=drm VGPU_TEST_DEVICES=$ndev /bin/test_libvgpu; echo "VGPU-LIBTEST-RC: \$?"
fi
cat /sys/kernel/debug/dri/*/queues 2>/dev/null
echo "VGPU-GUEST: unload"; rmmod vgpu && echo "VGPU-GUEST: unloaded"
if [ -f /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	sleep 1
	echo scan > /sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak > /tmp/leaks
	if [ -s /tmp/leaks ]; then
		echo "VGPU-GUEST: kmemleak report:"; cat /tmp/leaks
		echo "VGPU-GUEST: KERNEL-ISSUE"
	else
		echo "VGPU-GUEST: kmemleak: no leak"
	fi
fi
dmesg | grep -E "$kernel_issues" && echo "VGPU-GUEST: KERNEL-ISSUE"
poweroff -f
INIT
chmod 755 "$root/init"
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 > "$out/initramfs.cpio.gz"

log=$out/guest${prog#vgpu_test}.log
devices=()
for ((i = 0; i < ndev; i++)); do
	devices+=(-device vgpu-pci,threads=2)
done
rc=0
timeout "${VGPU_GUEST_TIMEOUT:-900}" "$qemu" -M q35 -nodefaults -display none -m "$mem" -smp 2 \
	-no-reboot -L /usr/share/qemu -L /usr/share/seabios -accel tcg \
	-kernel "$guest/vmlinuz" -initrd "$out/initramfs.cpio.gz" \
	"${devices[@]}" -serial stdio -append "console=ttyS0 panic=-1 quiet" \
	</dev/null | tee "$log" || rc=$?
if [[ $prog == vgpu_bench ]]; then
	bad=0
	grep -q 'VGPU-SELFTEST-RC: 0' "$log" || { echo "run-in-guest: vgpu_bench failed"; bad=1; }
	grep -q 'VGPU-GUEST: KERNEL-ISSUE' "$log" &&
		{ echo "run-in-guest: WARN/BUG/oops in the guest kernel log"; bad=1; }
	exit $bad
fi
tr -d '\r' <"$log" >"$log.txt"
pass=$(grep -c '^ok [0-9]' "$log.txt" || true)
fail=$(grep -c '^not ok [0-9]' "$log.txt" || true)
echo "run-in-guest: kselftests: $pass passed, $fail failed"
# the library tests: the last "N passed, N failed" line they printed
lib=$(sed -n '/^VGPU-LIBTEST: /,/^VGPU-LIBTEST-RC: /p' "$log.txt" |
	grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1 || true)
if [[ $lib =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
	echo "run-in-guest: test_libvgpu: $lib"
	pass=$((pass + BASH_REMATCH[1]))
	fail=$((fail + BASH_REMATCH[2]))
	if ! grep -q '^VGPU-LIBTEST-RC: 0$' "$log.txt" && ((BASH_REMATCH[2] == 0)); then
		echo "run-in-guest: test_libvgpu failed"
		fail=$((fail + 1))
	fi
else
	echo "run-in-guest: test_libvgpu did not finish"
	fail=$((fail + 1))
fi
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
