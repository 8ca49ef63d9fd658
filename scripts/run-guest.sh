#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run-guest.sh [--smoke] [-- EXTRA-QEMU-ARGS...]
#
# Boot the guest (scripts/build-guest.sh) in build/qemu-build's
# qemu-system-x86_64 with -device vgpu-pci, on q35 under TCG.
#
#   --smoke   the guest runs vgpu-smoke (finds the device, prints its
#             identification and capabilities, runs a kernel on it) and
#             powers off; the serial output is shown and the exit status
#             is 0 only if it printed "VGPU-SMOKE: PASS".
#   default   an interactive shell on the serial console (exit it, or
#             Ctrl-A X, to stop).
#
# Environment: VGPU_KVM=1 uses KVM instead of TCG (nested KVM hangs on
# some machines, so it is off by default); VGPU_DEVICE_PROPS adds device
# properties (e.g. "threads=2,sms=2"); VGPU_GUEST_TIMEOUT (seconds, default
# 300) bounds a smoke boot.
set -euo pipefail

cd "$(dirname "$0")/.."
qemu=build/qemu-build/qemu-system-x86_64
guest=build/guest
smoke=0
if [[ ${1:-} == --smoke ]]; then
	smoke=1
	shift
fi
[[ ${1:-} == -- ]] && shift

for f in "$qemu" "$guest/vmlinuz" "$guest/initramfs.cpio.gz"; do
	if [[ ! -e $f ]]; then
		echo "run-guest: $f missing (make qemu guest)" >&2
		exit 1
	fi
done

accel=(-accel tcg)
if [[ ${VGPU_KVM:-0} == 1 ]]; then
	accel=(-accel kvm -cpu host)
fi
dev=vgpu-pci${VGPU_DEVICE_PROPS:+,$VGPU_DEVICE_PROPS}
append="console=ttyS0 panic=-1 quiet"
args=(-M q35 -nodefaults -display none -m 512M -smp 2 -no-reboot
	-L /usr/share/qemu -L /usr/share/seabios "${accel[@]}"
	-kernel "$guest/vmlinuz" -initrd "$guest/initramfs.cpio.gz"
	-device "$dev")

if ((!smoke)); then
	exec "$qemu" "${args[@]}" -serial mon:stdio -append "$append" "$@"
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "run-guest: booting $(cat "$guest/kernel-version") with -device $dev (${accel[1]})"
start=$SECONDS
rc=0
timeout "${VGPU_GUEST_TIMEOUT:-300}" "$qemu" "${args[@]}" -serial stdio \
	-append "$append vgpu.smoke=1" "$@" </dev/null | tee "$log" || rc=$?
if grep -q '^VGPU-SMOKE: PASS' "$log"; then
	echo "run-guest: PASS ($((SECONDS - start))s)"
	exit 0
fi
if ((rc == 124)); then
	echo "run-guest: FAIL (no result within ${VGPU_GUEST_TIMEOUT:-300}s)"
else
	echo "run-guest: FAIL (QEMU exit status $rc)"
fi
exit 1
