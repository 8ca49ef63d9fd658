#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run.sh UNITS-FILE GUESTS LOGDIR [SCHED] (in a bundle made by bundle.sh): each
# line of UNITS-FILE is one guest's list of corpus units
# (PROG:TEST,PROG:TEST,...); at most GUESTS guests run at once (a TCG
# guest with 2 vCPUs in one TCG thread and a device of 2 SM threads: about
# 1.5 host cores each).  Each guest's serial log goes to LOGDIR/N.log;
# at the end, the TAP lines of every unit and a "N passed, N failed" line.
set -uo pipefail
units=${1:?usage: run.sh UNITS-FILE GUESTS LOGDIR}
par=${2:?}
logs=${3:?}
sched=${4:-100}
b=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$logs"
[[ -x $b/bin/qemu-system-x86_64 ]] || xz -dk "$b/bin/qemu-system-x86_64.xz"
i=0
while read -r line; do
	[[ -n $line ]] || continue
	while (($(jobs -rp | wc -l) >= par)); do wait -n; done
	i=$((i + 1))
	timeout 3000 "$b/lib/ld-linux-x86-64.so.2" --library-path "$b/lib" "$b/bin/qemu-system-x86_64" \
		-M q35 -nodefaults -display none -m 1G -smp 2 -no-reboot \
		-L "$b/share/qemu" -L "$b/share/seabios" -accel tcg,thread=single \
		-kernel "$b/vmlinuz" -initrd "$b/initramfs.cpio.xz" \
		-device vgpu-pci,threads=2,queues=10,x-inject=on -device vgpu-pci,threads=2,queues=10,x-inject=on \
		-serial file:"$logs/$i.log" \
		-append "console=ttyS0 panic=-1 quiet log_buf_len=8M vgpu_units=$line vgpu_sched=$sched" </dev/null >/dev/null 2>&1 &
done <"$units"
wait
pass=$(cat "$logs"/*.log | tr -d '\r' | grep -c '^ok ')
fail=$(cat "$logs"/*.log | tr -d '\r' | grep -c '^not ok ')
cat "$logs"/*.log | tr -d '\r' | grep -E '^(VGPU-UNIT|ok |not ok |# failed|VGPU-GUEST: (kernel log|KERNEL))' || true
issues=$(cat "$logs"/*.log | tr -d '\r' | grep -c 'KERNEL-ISSUE')
echo "kernel reports: $issues"
echo "$pass passed, $fail failed"
