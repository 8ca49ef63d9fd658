#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run-guest.sh [--smoke | --run] [-- EXTRA-QEMU-ARGS...]
#
# Boot the guest (scripts/build-guest.sh) in build/qemu-build's
# qemu-system-x86_64 with -device vgpu-pci, on q35 under TCG.
#
#   --smoke   the guest runs vgpu-smoke (finds the device, prints its
#             identification and capabilities, runs a kernel on it, no
#             driver) and powers off; the serial output is shown and the
#             exit status is 0 only if it printed "VGPU-SMOKE: PASS".
#   --run     the guest loads vgpu.ko, shows the device (vgpu-info), runs
#             every example through libvgpu on the drm backend, compares
#             each with its .expected and powers off; exit status 0 only if
#             it printed "VGPU-RUN: PASS" (every example as expected, no
#             WARN/BUG/oops in the kernel log).
#   default   the driver loaded and an interactive shell on the serial
#             console (exit it, or Ctrl-A X, to stop).
#
# Environment: VGPU_KVM=1 uses KVM instead of TCG (nested KVM hangs on
# some machines, so it is off by default); VGPU_DEVICE_PROPS adds device
# properties (e.g. "threads=2,sms=2"); VGPU_GUEST_TIMEOUT (seconds, default
# 300) bounds a --smoke or --run boot.
set -euo pipefail

cd "$(dirname "$0")/.."
qemu=build/qemu-build/qemu-system-x86_64
guest=build/guest
mode=shell
case ${1:-} in
--smoke) mode=smoke; shift ;;
--run) mode=run; shift ;;
esac
[[ ${1:-} == -- ]] && shift

for f in "$qemu" "$guest/vmlinuz" "$guest/initramfs.cpio.gz"; do
	if [[ ! -e $f ]]; then
		echo "run-guest: $f missing (make qemu guest)" >&2
		exit 1
	fi
done

accel=(-accel tcg,thread=single)
if [[ ${VGPU_KVM:-0} == 1 ]]; then
	accel=(-accel kvm -cpu host)
fi
dev=vgpu-pci${VGPU_DEVICE_PROPS:+,$VGPU_DEVICE_PROPS}
append="console=ttyS0 panic=-1 quiet"
args=(-M q35 -nodefaults -display none -m 512M -smp 2 -no-reboot
	-L /usr/share/qemu -L /usr/share/seabios "${accel[@]}"
	-kernel "$guest/vmlinuz" -initrd "$guest/initramfs.cpio.gz"
	-device "$dev")

if [[ $mode == shell ]]; then
	exec "$qemu" "${args[@]}" -serial mon:stdio -append "$append" "$@"
fi
tag=VGPU-${mode^^}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "run-guest: booting $(cat "$guest/kernel-version") with -device $dev (${accel[1]})"
start=$SECONDS
rc=0
timeout "${VGPU_GUEST_TIMEOUT:-300}" "$qemu" "${args[@]}" -serial stdio \
	-append "$append vgpu.$mode=1" "$@" </dev/null | tee "$log" || rc=$?
if grep -q "^$tag: PASS" "$log"; then
	echo "run-guest: PASS ($((SECONDS - start))s)"
	exit 0
fi
if ((rc == 124)); then
	echo "run-guest: FAIL (no result within ${VGPU_GUEST_TIMEOUT:-300}s)"
else
	echo "run-guest: FAIL (QEMU exit status $rc)"
fi
exit 1
