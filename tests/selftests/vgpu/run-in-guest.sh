#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# run-in-guest.sh [--bench]: boot the guest with vgpu.ko and the installed
# kselftests (build/selftests/install: `make -C tests/selftests/vgpu`,
# build.sh) in an initramfs of its own, load the driver and run the suite
# with kselftest's own runner, run_kselftest.sh:
#
#   ./run_kselftest.sh -t vgpu:vgpu_test -t vgpu:vgpu_reset -t vgpu:vgpu_queue \
#                      -t vgpu:vgpu_mem -t vgpu:vgpu_faults \
#                      -t vgpu:vgpu_isolation -t vgpu:vgpu_vm \
#                      -t vgpu:vgpu_userq -t vgpu:vgpu_race
#                                               the driver's kselftests
#   (then every vgpu-pci device is bound)
#   VGPU_BACKEND=drm VGPU_TEST_DEVICES=N \
#   ./run_kselftest.sh -t vgpu:test_libvgpu ... -t vgpu:vgpu_multi -t vgpu:vgpu_dos
#                                               the library on the devices,
#                                               and the two-device tests
#   VGPU_BACKEND=drm VGPU_TEST_DEVICES=N LD_LIBRARY_PATH=/usr/lib/vgpu-cuda \
#   ./run_kselftest.sh -t vgpu:test_cudart -t vgpu:sample_vectorAdd ...
#                                               the CUDA programs built by
#                                               nvcc (make guest-cuda:
#                                               build/guest-cuda, the
#                                               Makefile's GUEST_CUDA), on
#                                               vGPU's libcudart.so.13 and
#                                               libcuda.so.1, with the
#                                               host's shared libraries
#
# each program under the timeout of vgpu/settings (times
# VGPU_TIMEOUT_SCALE, through run_kselftest.sh -o).  The results are the
# runner's KTAP: per program, the tests it counts in its own
# "# Totals: pass:N fail:N ..." line; a program that crashed or ran out
# of time ("not ok N selftests: vgpu: P # TIMEOUT"/"# exit=N", no
# Totals) counts the tests it finished plus, as failed, the rest of its
# plan (at least one).  The last line is the sum, "N passed, N failed".
#
# kselftest's runner on busybox: the guest's init makes the /dev/fd,
# /dev/stdin, /dev/stdout and /dev/stderr links devtmpfs lacks (the runner
# logs to /dev/stdout), and /usr/bin/timeout (the runner calls it by that
# path, with GNU's --foreground) is a shim that runs busybox timeout.
#
# Fails on any test failure and on any report in the guest's kernel log:
# WARN/BUG/oops and every checker of the debug kernel (lockdep, KASAN,
# KFENCE, DEBUG_OBJECTS, list corruption, refcount, sleeping in atomic
# context); where kmemleak exists, it scans after the final rmmod and any
# leak it reports (printed) fails the run, as does an rmmod that fails.
# Where the kernel has KUnit (the debug kernel) and the module KUnit
# suites, their KTAP results (debugfs) are counted with kunit.py parse
# (scripts/kunit-count.sh).
#
# The guest has VGPU_GUEST_DEVICES vgpu-pci devices (default 2; 1 with
# --bench).  With VGPU_GUEST_ISOLATE=1 (the default) vgpu.ko drives only
# the first while the kselftests run: the others carry driver_override
# "none", because the suite assumes a single device (it unbinds "the"
# device and expects no vgpu device left, reads "the" debugfs directory).
# Then every device is bound and test_libvgpu runs with VGPU_TEST_DEVICES
# set to their number, so that its dma-buf and several-device tests use
# two real devices.  Each device has fault injection on (x-inject=on:
# vgpu_faults drives the driver's recovery paths with it).  The device runs SMs on 2 host threads (threads=2) and has 8 queues (two of normal priority),
# so that queues run concurrently (reset.completed_job_not_rerun needs it).
#
# With --bench, runs vgpu/vgpu_bench instead (make bench-guest: installed,
# not a run_kselftest.sh test) and fails when it fails or on a kernel
# report.  With --fuzz, runs vgpu/vgpu_fuzz (make fuzz-guest, on the debug
# kernel) for VGPU_FUZZ_SECONDS (default 60) with VGPU_FUZZ_SEED, then
# unloads and reloads vgpu.ko and runs job.submit_store; it fails when
# either fails, on any kernel report or a kmemleak report.
#
# Environment:
#   VGPU_GUEST_DIR      the guest kernel: vmlinuz, modules/, kernel-version
#                       (default build/guest, Debian's 6.12, made by
#                       scripts/build-guest.sh; build/guest-debug is the
#                       debug kernel)
#   VGPU_MODULE         vgpu.ko (default build/module/vgpu.ko)
#   VGPU_GUEST_MEM      guest memory (default 1G; the debug kernel: 2G)
#   VGPU_TIMEOUT_SCALE  (default 1) multiplies the driver's job timeout
#                       (timeout_ms), the tests' own timeouts (they read
#                       it: vgpu_lib.h) and the runner's per-program
#                       timeout, for a slower kernel
#   VGPU_TIMEOUT_MS     timeout_ms before scaling (default 30000)
#   VGPU_DEVICE_PROPS   more vgpu-pci properties for every device (e.g.
#                       "preempt-every=997": make check-guest-preempt)
#   VGPU_EXPECT_PREEMPTIONS  1: fail when the devices' PREEMPTIONS (debugfs
#                       queues, at the end) are all 0
#   VGPU_GUEST_CORPUS   0: leave the CUDA corpus (test_corpus_*) out (a
#                       minute or two of a lane; the default is 1, and
#                       make check-guest-debug's is 0)
#   VGPU_CORPUS_ONLY, VGPU_CORPUS_REPEAT, VGPU_CORPUS_SCHEDULES  passed to
#                       the corpus programs (one test; each test up to N
#                       times; under N random schedules: loops that hunt
#                       intermittent failures, with VGPU_GUEST_ONLY and
#                       VGPU_TIMEOUT_SCALE)
#   VGPU_GUEST_SCHEDULE  SEED: the corpus programs run under the device's
#                       random schedules (VGPU_RANDOM_SCHEDULE=SEED; make
#                       check-guest-preempt sets its N)
#   VGPU_GUEST_ONLY     run only these programs (space-separated, e.g.
#                       "vgpu_faults vgpu_dos"); the others count as
#                       not run (a developer's loop: make check-guest
#                       runs them all)
#   VGPU_GUEST_TIMEOUT  seconds QEMU may run in all (default: both
#                       programs' timeouts plus 300 s, scaled)
# The work files are build/selftests/<guest dir's name>[-bench][-props]/ and the
# serial log build/selftests/<the same>.log; runs on one guest directory
# wait for each other.
set -euo pipefail
mode=test
[[ ${1:-} == --bench ]] && mode=bench
[[ ${1:-} == --fuzz ]] && mode=fuzz
cd "$(dirname "$0")/../../.."
top=$PWD
# the programs by group (the one list build.sh and the Makefile read too)
# shellcheck source=programs.sh
. tests/selftests/vgpu/programs.sh
out=$top/build/selftests
inst=$out/install
guest_rel=${VGPU_GUEST_DIR:-build/guest}
guest=$(realpath -m "$guest_rel")
ko=$(realpath -m "${VGPU_MODULE:-build/module/vgpu.ko}")
mem=${VGPU_GUEST_MEM:-1G}
scale=${VGPU_TIMEOUT_SCALE:-1}
[[ $scale =~ ^[1-9][0-9]*$ ]] || { echo "run-in-guest: VGPU_TIMEOUT_SCALE=$scale: not a positive integer" >&2; exit 2; }
timeout_ms=$((${VGPU_TIMEOUT_MS:-30000} * scale))
qemu=$top/build/qemu-build/qemu-system-x86_64

if [[ ! -f $guest/vmlinuz || ! -f $guest/kernel-version || ! -d $guest/modules ]]; then
	if [[ $guest == "$top/build/guest" ]]; then
		scripts/build-guest.sh
	else
		echo "run-in-guest: no guest kernel in $guest_rel (vmlinuz, modules/, kernel-version)" >&2
		exit 1
	fi
fi
if [[ ! -f $ko ]]; then
	if [[ $ko == "$top/build/module/vgpu.ko" ]]; then
		scripts/build-module.sh
	else
		echo "run-in-guest: no $ko" >&2
		exit 1
	fi
fi
[[ -x $qemu ]] || scripts/build-qemu.sh
make --no-print-directory -C tests/selftests/vgpu
# the CUDA programs and the shared libraries they load (scripts/guest-cuda.sh)
cuda_dir=$top/build/guest-cuda
cuda_progs=()
if [[ $mode == test ]]; then
	make --no-print-directory BUILD=build CC=gcc SAN=0 guest-cuda
	mapfile -t cuda_progs <"$cuda_dir/programs.txt"
	if [[ ${VGPU_GUEST_CORPUS:-1} == 0 ]]; then
		for i in "${!cuda_progs[@]}"; do
			[[ ${cuda_progs[i]} == test_corpus_* ]] && unset 'cuda_progs[i]'
		done
		cuda_progs=(${cuda_progs[@]+"${cuda_progs[@]}"})
	fi
fi
kver=$(cat "$guest/kernel-version")

tag=$(basename "$guest")
[[ $mode == bench ]] && tag+=-bench
[[ $mode == fuzz ]] && tag+=-fuzz
[[ -n ${VGPU_DEVICE_PROPS:-} ]] && tag+=-props
work=$out/$tag
log=$out/$tag.log
mkdir -p "$out"
exec 8>"$out/$tag.lock"
if ! flock -n 8; then
	echo "run-in-guest: waiting for another run on $guest_rel"
	flock 8
fi

ndev=${VGPU_GUEST_DEVICES:-2}
[[ $mode != test ]] && ndev=${VGPU_GUEST_DEVICES:-1}
isolate=${VGPU_GUEST_ISOLATE:-1}
# the runner's timeout per program (vgpu/settings), scaled
ksft_timeout=$(sed -n 's/^timeout=\([0-9]*\)$/\1/p' "$inst/vgpu/settings")
ksft_timeout=${ksft_timeout:-45}
override=
((scale == 1)) || override="-o $((ksft_timeout * scale))"
# ksft_cmd ENV PROG...: the guest's command that runs PROG... with
# run_kselftest.sh (ENV before it), only those named in VGPU_GUEST_ONLY
# when it is set; "true" when none is left
ksft_cmd() {
	local env=$1 t="" p
	shift
	for p; do
		[[ -z ${VGPU_GUEST_ONLY:-} || " $VGPU_GUEST_ONLY " == *" $p "* ]] && t+=" -t vgpu:$p"
	done
	if [[ -n $t ]]; then
		echo "${env:+$env }./run_kselftest.sh $override$t"
	else
		echo true
	fi
}
# the corpus harness's VGPU_CORPUS_ONLY, _REPEAT and _SCHEDULES
# (tests/corpus/corpus.h), passed on when set, and VGPU_GUEST_SCHEDULE as
# the corpus programs' VGPU_RANDOM_SCHEDULE (the other CUDA programs run
# under the default schedule); the known failures, which the programs
# name by the host's path, from the copy scripts/guest-cuda.sh lays out
corpus_env=" VGPU_CORPUS_KNOWN=/etc/vgpu/corpus-known-failures.txt"
for v in VGPU_CORPUS_ONLY VGPU_CORPUS_REPEAT VGPU_CORPUS_SCHEDULES; do
	[[ -n ${!v:-} ]] && corpus_env+=" $v=${!v}"
done
[[ -n ${VGPU_GUEST_SCHEDULE:-} ]] && corpus_env+=" VGPU_RANDOM_SCHEDULE=$VGPU_GUEST_SCHEDULE"
cuda_plain=() cuda_corpus=()
for p in ${cuda_progs[@]+"${cuda_progs[@]}"}; do
	if [[ $p == test_corpus_* ]]; then cuda_corpus+=("$p"); else cuda_plain+=("$p"); fi
done
fuzz_secs=${VGPU_FUZZ_SECONDS:-60}
fuzz_seed=${VGPU_FUZZ_SEED:-1}
if [[ $mode == fuzz ]]; then
	# the kselftests with allocations failing: 6 runs of at most this, in
	# each of VGPU_KSFT_FAIL_ROUNDS rounds (default 1)
	ksft_fail_secs=$((fuzz_secs / 12 > 10 ? fuzz_secs / 12 : 10))
	ksft_fail_rounds=${VGPU_KSFT_FAIL_ROUNDS:-1}
	guest_timeout=${VGPU_GUEST_TIMEOUT:-$(((fuzz_secs * 2 + 420 + (ksft_fail_rounds - 1) * 10 * (ksft_fail_secs + 5)) * scale))}
else
	guest_timeout=${VGPU_GUEST_TIMEOUT:-$(((3 * ksft_timeout + 300) * scale))}
fi

root=$work/initramfs
rm -rf "$work"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,lib/modules/$kver/extra}
cp /bin/busybox "$root/bin/busybox"

# The DRM modules vgpu.ko needs, with their dependencies, from the guest
# kernel's tree; those built into the kernel (the debug kernel)
# modprobe --show-depends reports as "builtin NAME": nothing to copy.
modroot=$work/modroot
mkdir -p "$modroot/lib/modules"
ln -sfn "$guest/modules" "$modroot/lib/modules/$kver"
[[ -f $guest/modules/modules.dep ]] || depmod -b "$modroot" "$kver"
mods=(drm drm_shmem_helper gpu-sched drm_exec drm_gpuvm)
IFS=, read -r -a deps <<<"$(modinfo -F depends "$ko")"
for m in "${mods[@]}" "${deps[@]+"${deps[@]}"}"; do
	[[ -n $m ]] || continue
	if ! modprobe -d "$modroot" -S "$kver" --show-depends "$m" >"$work/deps" 2>&1; then
		echo "run-in-guest: $m is neither a module nor built in: $(cat "$work/deps")" >&2
		continue
	fi
	awk '$1 == "insmod" { print $2 }' "$work/deps"
done | sort -u | while read -r f; do
	rel=${f#"$modroot/lib/modules/$kver/"}
	mkdir -p "$root/lib/modules/$kver/$(dirname "$rel")"
	cp "$f" "$root/lib/modules/$kver/$rel"
	# Debian's are .ko.xz: busybox would hand them to the kernel first
	# ("Invalid ELF header magic"), then unpack them itself
	case $rel in
	*.xz) xz -d "$root/lib/modules/$kver/$rel" ;;
	esac
done
cp "$guest/modules/modules.order" "$guest/modules/modules.builtin"* "$root/lib/modules/$kver/" 2>/dev/null || true
cp "$ko" "$root/lib/modules/$kver/extra/vgpu.ko"
depmod -b "$root" "$kver"

# the installed kselftests: run_kselftest.sh, kselftest-list.txt,
# kselftest/, vgpu/
cp -a "$inst" "$root/kselftest"
rm -f "$root/kselftest/.installed"
# the CUDA programs join the vgpu collection; their libraries, vGPU's and
# the host's (with the loader), go where the programs look for them
if ((${#cuda_progs[@]})); then
	cp -a "$cuda_dir/root/." "$root/"
	printf 'vgpu:%s\n' "${cuda_progs[@]}" >>"$root/kselftest/kselftest-list.txt"
fi

# /usr/bin/timeout for kselftest's runner.sh, which runs
# "/usr/bin/timeout --foreground T /usr/bin/timeout T ./PROG" when that
# file exists.  Busybox timeout knows no --foreground, kills PROG alone
# (GNU's, without --foreground, kills PROG's process group: children
# that would keep the runner's pipe open go too) and, as it execs PROG in
# its own process, ends with PROG's status, 143 for its SIGTERM.  The
# shim takes --foreground, runs PROG in a session of its own and, on time
# out (or when the outer timeout ends the shim), kills every process of
# that session: a group kill would miss the harness's test processes,
# each in a process group of its own (setpgrp), and one left holding a
# DRM file keeps vgpu.ko from unloading.  It reports 124 as GNU's does:
# the runner then prints "not ok N selftests: vgpu: PROG # TIMEOUT T
# seconds".
cat >"$root/usr/bin/timeout" <<'SHIM'
#!/bin/sh
fg=
while :; do
	case $1 in
	--foreground) fg=1; shift ;;
	--preserve-status|-v|--verbose) shift ;;
	*) break ;;
	esac
done
# kill_session SID: every process of session SID, whatever its group
kill_session() {
	local sid=$1 f p
	for f in /proc/[0-9]*/stat; do
		set -- $(sed 's/^.*) //' "$f" 2>/dev/null)
		[ "$4" = "$sid" ] || continue
		p=${f%/stat}
		kill -s KILL "${p#/proc/}" 2>/dev/null
	done
}
if [ -n "$fg" ]; then
	busybox timeout "$@"
	rc=$?
else
	busybox setsid busybox timeout "$@" &
	pid=$!
	# the outer timeout's SIGTERM, at the same time: the session goes too
	trap 'kill_session $pid; exit 124' TERM
	wait $pid
	rc=$?
	[ $rc -eq 143 ] && kill_session $pid
fi
[ $rc -eq 143 ] && rc=124
exit $rc
SHIM
chmod 755 "$root/usr/bin/timeout"

# every checker's report (the debug kernel's) and WARN/BUG/oops
kernel_issues='WARNING|BUG|Oops|Call Trace|blocked for more than|possible circular locking|possible recursive locking|inconsistent lock state|lock held when returning|DEBUG_LOCKS_WARN_ON|suspicious RCU usage|ODEBUG:|list_add corruption|list_del corruption|refcount_t:|KASAN|KFENCE|sleeping function called from invalid context|scheduling while atomic|kmemleak: .*new suspected memory leaks'
# the same, less the stack that every report prints: a report's own line
report_headers=${kernel_issues/Call Trace|/}
if [[ $mode == bench ]]; then
	run="cd /kselftest/vgpu && ./vgpu_bench; echo \"VGPU-SELFTEST-RC: \$?\""
elif [[ $mode == fuzz ]]; then
	# the ioctl fuzzer, then the module unloaded, loaded again and a job
	# run to the right result (vgpu_test's job.submit_store)
	# Then, where the kernel has fault injection (the debug kernel), half
	# as long again in three slices with the driver's allocations
	# (fail_vgpu), the slab's (failslab) and the page allocator's
	# (fail_page_alloc) failing in the fuzzer's threads (-F) at rising
	# probabilities (sleeping allocations too).
	run="cd /kselftest/vgpu && ./vgpu_fuzz -t $fuzz_secs -s $fuzz_seed -p 3
echo \"VGPU-FUZZ-RC: \$?\"
fi_all='fail_vgpu failslab fail_page_alloc'
fi_ok=1
for a in \$fi_all; do [ -d /sys/kernel/debug/\$a ] || fi_ok=0; done
# fi_set V S P: fail_vgpu V%, failslab S%, fail_page_alloc P%, in marked
# tasks only, every order, sleeping allocations too, a log line per
# failure (verbose 1, rate-limited).  All of it each time: a kselftest
# that reloads vgpu.ko makes a new fail_vgpu with the defaults (verbose
# 2: a stack per failure).
fi_set() {
	for a in \$fi_all; do
		d=/sys/kernel/debug/\$a
		echo Y >\$d/task-filter; echo 1 >\$d/verbose
		echo 2500 >\$d/verbose_ratelimit_interval_ms; echo 5 >\$d/verbose_ratelimit_burst
		echo 1 >\$d/interval; echo -1 >\$d/times; echo 0 >\$d/space
	done
	echo N >/sys/kernel/debug/failslab/ignore-gfp-wait
	echo N >/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait
	echo N >/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem
	echo 0 >/sys/kernel/debug/fail_page_alloc/min-order
	echo \$1 >/sys/kernel/debug/fail_vgpu/probability
	echo \$2 >/sys/kernel/debug/failslab/probability
	echo \$3 >/sys/kernel/debug/fail_page_alloc/probability
}
if [ \$fi_ok = 1 ]; then
	frc=0 i=1
	for p in '5 1 1' '20 5 5' '50 20 10'; do
		set -- \$p
		fi_set \$1 \$2 \$3
		echo \"VGPU-FUZZ-FAIL: fail_vgpu \$1% failslab \$2% fail_page_alloc \$3%\"
		./vgpu_fuzz -F -t $((fuzz_secs / 6 + 1)) -s \$(($fuzz_seed + i)) -p 3 || frc=\$?
		i=\$((i + 1))
	done
	echo \"VGPU-FUZZ-FAIL-RC: \$frc\"
	# The kselftests themselves with allocations failing (VGPU_MAKE_IT_FAIL:
	# vgpu_lib.h), at two probabilities, each program for at
	# most $ksft_fail_secs s (its process group killed then): their
	# verdicts are expected to fail; the oracle is the kernel's (the log,
	# the reload, kmemleak).
	r=0
	while [ \$r -lt $ksft_fail_rounds ]; do
	r=\$((r + 1))
	for p in '5 1 1' '20 5 5'; do
		set -- \$p
		for t in vgpu_test vgpu_reset vgpu_queue vgpu_vm vgpu_userq; do
			# A test's own reload of vgpu.ko that failed under
			# injection, or was killed at the time bound (kthread
			# creation then fails: -EINTR), leaves no vgpu.ko or one
			# bound to no device: every later program would test
			# nothing.  Load it again, unmarked, and say so.
			if [ ! -d /sys/module/vgpu ] || ! ls /sys/bus/pci/drivers/vgpu 2>/dev/null | grep -q :; then
				dismiss_devcoredumps
				[ -d /sys/module/vgpu ] && rmmod vgpu
				if modprobe vgpu timeout_ms=$timeout_ms && ls /sys/bus/pci/drivers/vgpu | grep -q :; then
					echo \"VGPU-KSFT-FAIL: vgpu.ko loaded again before \$t\"
				else
					echo \"VGPU-KSFT-FAIL: vgpu.ko did not load again before \$t\"
				fi
			fi
			fi_set \$1 \$2 \$3
			VGPU_MAKE_IT_FAIL=1 /usr/bin/timeout $ksft_fail_secs ./\$t >/tmp/ksft-fail.log 2>&1
			# the shim killed the program's session (the harness's
			# test processes, in groups of their own, included);
			# they must all have ended, files closed
			pidof \$t >/dev/null &&
				echo \"VGPU-KSFT-FAIL: \$t: processes \$(pidof \$t) outlived the timeout: killed by name\"
			killall -q -9 \$t
			w=0
			while pidof \$t >/dev/null && [ \$w -lt 30 ]; do sleep 1; w=\$((w + 1)); done
			pidof \$t >/dev/null && echo \"VGPU-KSFT-FAIL: \$t: processes \$(pidof \$t) survive SIGKILL\"
			echo \"VGPU-KSFT-FAIL: fail_vgpu \$1% failslab \$2% fail_page_alloc \$3%: \$t: \$(grep -c '^ok ' /tmp/ksft-fail.log) ok, \$(grep -c '^not ok ' /tmp/ksft-fail.log) not ok\"
			grep -q '^1\\.\\.' /tmp/ksft-fail.log ||
				echo \"VGPU-KSFT-FAIL: \$t did not start: \$(head -c 300 /tmp/ksft-fail.log | tr '\\n' ' ')\"
		done
	done
	done
	# verbose 1: a line per injected failure, at most 5 per 2500 jiffies
	for a in \$fi_all; do
		echo \"VGPU-FUZZ-FAIL: \$a failures logged (rate-limited): \$(dmesg | grep -c \"^.*name \$a, interval\")\"
	done
	fi_set 0 0 0
else
	echo \"VGPU-FUZZ-FAIL-RC: no fault injection\"
fi
# vgpu.ko loaded by a modprobe killed (SIGKILL) at a random moment,
# 20 times: a kill during the probe fails the next step that can be
# interrupted (a kernel thread's creation: -EINTR), and the probe unwinds
# from there.  Afterwards the module must unload, load and run a job as
# usual (below), with nothing in the log.
p0=\$(dmesg | grep -c 'probe with driver vgpu failed')
lk=0
while [ \$lk -lt 20 ]; do
	lk=\$((lk + 1))
	dismiss_devcoredumps >/dev/null
	[ -d /sys/module/vgpu ] && rmmod vgpu
	modprobe vgpu timeout_ms=$timeout_ms 2>/dev/null &
	usleep \$((RANDOM * 30))
	kill -9 \$! 2>/dev/null
	wait \$! 2>/dev/null
done
echo \"VGPU-LOADKILL: 20 modprobes killed at random moments: \$((\$(dmesg | grep -c 'probe with driver vgpu failed') - p0)) failed probes\"
sleep 2
dismiss_devcoredumps
# (a kselftest's own reload that failed under fault injection leaves no
# vgpu.ko behind: nothing to unload then)
if { [ ! -d /sys/module/vgpu ] || rmmod vgpu; } && modprobe vgpu timeout_ms=$timeout_ms; then
	./vgpu_test -f job -t submit_store >/tmp/reload.log 2>&1
	echo \"VGPU-RELOAD-RC: \$?\"; tail -n 3 /tmp/reload.log
else
	echo \"VGPU-RELOAD-RC: reload failed\"
	# who still holds vgpu.ko
	echo \"VGPU-GUEST: vgpu refcnt \$(cat /sys/module/vgpu/refcnt 2>/dev/null)\"
	for p in /proc/[0-9]*; do
		ls -l \$p/fd 2>/dev/null | grep -q /dev/dri &&
			echo \"VGPU-GUEST: \${p#/proc/} \$(cat \$p/comm) \$(cat \$p/wchan 2>/dev/null) holds a DRM fd\"
	done
	cat /sys/kernel/debug/dri/*/clients 2>/dev/null
fi
cd /"
else
	run="cd /kselftest
$(ksft_cmd "" $VGPU_KSFT_PROGS); echo \"VGPU-SELFTEST-RC: \$?\"
for d in \$others; do
	echo > /sys/bus/pci/devices/\$d/driver_override
	echo \$d > /sys/bus/pci/drivers_probe
done
echo \"VGPU-LIBTEST: \$(ls /sys/bus/pci/drivers/vgpu | grep -c :) vgpu device(s) bound\"
$(ksft_cmd "VGPU_BACKEND=drm VGPU_TEST_DEVICES=$ndev" $VGPU_LIB_PROGS)
echo \"VGPU-LIBTEST-RC: \$?\"
$(ksft_cmd VGPU_BACKEND=drm $VGPU_PTX_PROGS)
t0=\$(cut -d. -f1 /proc/uptime)
$(ksft_cmd "VGPU_BACKEND=drm VGPU_TEST_DEVICES=$ndev LD_LIBRARY_PATH=/usr/lib/vgpu-cuda VGPU_CACHE_PATH=/var/cache/vgpu" ${cuda_plain[@]+"${cuda_plain[@]}"})
$(ksft_cmd "VGPU_BACKEND=drm VGPU_TEST_DEVICES=$ndev LD_LIBRARY_PATH=/usr/lib/vgpu-cuda VGPU_CACHE_PATH=/var/cache/vgpu$corpus_env" ${cuda_corpus[@]+"${cuda_corpus[@]}"})
echo \"VGPU-LIBTEST: the CUDA programs took \$((\$(cut -d. -f1 /proc/uptime) - t0)) s\"
cd /"
fi
cat >"$root/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
# what kselftest's runner expects of /dev and devtmpfs has not
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
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
# A devcoredump holds its driver's module until it is read and dismissed,
# or for 5 minutes (DEVCD_TIMEOUT): a test that failed before dismissing
# the dump of a job it let time out (the kselftests with allocations
# failing do) would keep vgpu.ko from unloading.  Dismiss them, as the
# tests do, before an unload.
dismiss_devcoredumps() {
	local d n=0
	for d in /sys/class/devcoredump/devcd*; do
		[ -e \$d/data ] && echo 1 >\$d/data && n=\$((n + 1))
	done
	[ \$n = 0 ] || echo "VGPU-GUEST: \$n devcoredump(s) dismissed"
}
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
	# counted once: the tests that load vgpu.ko again (reset, faults,
	# lifecycle) load it without running its suites (a glob none matches)
	[ -w /sys/module/kunit/parameters/filter_glob ] &&
		echo vgpu-kunit-ran-at-boot >/sys/module/kunit/parameters/filter_glob
fi
$run
cat /sys/kernel/debug/dri/*/queues 2>/dev/null
dismiss_devcoredumps
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
# how full lockdep's fixed tables are (each reload of vgpu.ko adds stack
# traces that stay: a full table turns lockdep off with a report)
if [ -f /proc/lockdep_stats ]; then
	echo "VGPU-GUEST: lockdep: \$(grep -E '^ *(lock-classes|direct dependencies|dependency chains|dependency chain hlocks used|stack-trace entries):' /proc/lockdep_stats | sed 's/^ *//; s/:  */ /' | tr '\n' ';')"
fi
# A memory cgroup's OOM kill (vgpu_mem: a cgroup's limit at work) is no
# report: its block, from "invoked oom-killer" to "Memory cgroup out of
# memory: Killed process", leaves the log that is scanned.  A global OOM
# kill stays (its Call Trace is a report).
# An allocation the fault injection failed (vgpu_fuzz -F) is no report
# either: the page allocator's warning of a failure whose caller did not
# ask for __GFP_NOWARN ("page allocation failure" or "vmalloc error",
# warn_alloc) prints a stack; its block, from that line to the stack's
# end, leaves the log too.  Anything else in the block stays reported: a
# WARNING, BUG or any other checker's header line inside it ends the
# exemption and is kept.
dmesg | awk '/invoked oom-killer:/ { b = 1; s = "" }
	b { s = s \$0 "\n"; if (/Killed process/) { if (!/Memory cgroup out of memory/) printf "%s", s; b = 0 }; next }
	/: page allocation failure: order:|: vmalloc error: size / { w = 1; next }
	w && /$report_headers/ { w = 0 }
	w { if (/<\/TASK>/) w = 0; next }
	{ print } END { if (b) printf "%s", s }' >/tmp/klog
echo "VGPU-GUEST: kernel log: \$(dmesg | wc -l) lines"
echo "VGPU-GUEST: allocation-failure warnings left out of the scan: \$(dmesg | grep -c -E ': page allocation failure: order:|: vmalloc error: size ')"
# the scan must see the whole log: a ring that wrapped lost its start
if ! dmesg | head -n 1 | grep -q 'Linux version'; then
	echo "VGPU-GUEST: the kernel log wrapped (log_buf_len): the scan missed its start"
	echo "VGPU-GUEST: KERNEL-ISSUE"
fi
if grep -q -E "$kernel_issues" /tmp/klog; then
	echo "VGPU-GUEST: kernel log reports:"
	grep -E -A 20 "$kernel_issues" /tmp/klog
	echo "VGPU-GUEST: KERNEL-ISSUE"
fi
echo "VGPU-GUEST: end"
# -no-reboot: QEMU exits (also where poweroff only halts: no ACPI)
reboot -f
INIT
chmod 755 "$root/init"
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$work/initramfs.cpio.gz"

devices=()
for ((i = 0; i < ndev; i++)); do
	devices+=(-device "vgpu-pci,threads=2,queues=10,x-inject=on${VGPU_DEVICE_PROPS:+,$VGPU_DEVICE_PROPS}")
done
echo "run-in-guest: kernel $kver ($guest_rel), $(basename "$ko") timeout_ms=$timeout_ms, -m $mem, $ndev device(s), QEMU timeout ${guest_timeout}s"
rc=0
# thread=single: with one TCG thread per vCPU the guest kernel's boot-time
# text patching (int3-based, text_poke_bp) raced another vCPU once in a
# fresh-clone CI run ("Oops: int3" in sched_clock_cpu inside a
# call-function IPI, panic at 1.4 s); one TCG thread for both vCPUs
# removes the race and costs nothing measurable here.
# log_buf_len: the kernel log is scanned once, at the end, and must hold
# a long fuzzer run's (the debug kernel's default is 128 KiB).
# guest_clock FILE: copy the guest's output through, and write to FILE a
# line "MS LINE" for each line that starts or ends a program ("# selftests:
# vgpu: P", "ok N selftests: vgpu: P") or marks a phase (VGPU-...), MS the
# host's milliseconds since QEMU started: each program's time goes beside
# its counts below (which lanes to trim when make check grows too long)
guest_clock() {
	local line t0=${EPOCHREALTIME/./}
	: >"$1"
	while IFS= read -r line || [[ -n $line ]]; do
		printf '%s\n' "$line"
		case $line in
		'# selftests: vgpu: '* | 'ok '*' selftests: vgpu: '* | 'not ok '*' selftests: vgpu: '* | VGPU-*)
			echo "$(((${EPOCHREALTIME/./} - t0) / 1000)) ${line%$'\r'}" >>"$1"
			;;
		esac
	done
}
timeout "$guest_timeout" "$qemu" -M q35 -nodefaults -display none -m "$mem" -smp 2 \
	-no-reboot -L /usr/share/qemu -L /usr/share/seabios -accel tcg,thread=single \
	-kernel "$guest/vmlinuz" -initrd "$work/initramfs.cpio.gz" \
	"${devices[@]}" -serial stdio -append "console=ttyS0 panic=-1 quiet log_buf_len=8M" \
	</dev/null | tee "$log" | guest_clock "$work/clock" || rc=$?
tr -d '\r' <"$log" >"$log.txt"
echo

# show_reports: the kernel log's reports again, next to the verdict (the
# end of a long run's output is what a CI summary keeps), at most 80 lines
show_reports() {
	sed -n '/^VGPU-GUEST: kernel log reports:$/,/^VGPU-GUEST: KERNEL-ISSUE$/p;/^VGPU-GUEST: kmemleak report:$/,/^VGPU-GUEST: KERNEL-ISSUE$/p' "$log.txt" |
		head -n 80 | sed 's/^/run-in-guest: | /'
}

if [[ $mode == fuzz ]]; then
	pass=0 fail=0
	grep -E '^vgpu_fuzz: |^VGPU-(FUZZ|KSFT)-FAIL: |^VGPU-LOADKILL: |^VGPU-GUEST: (allocation-failure|kernel log|lockdep)' "$log.txt" |
		sed 's/^/run-in-guest: /' || true
	if grep -q '^VGPU-FUZZ-RC: 0$' "$log.txt"; then
		pass=$((pass + 1))
	else
		echo "run-in-guest: vgpu_fuzz did not run to its end"; fail=$((fail + 1))
	fi
	if grep -q '^VGPU-FUZZ-FAIL-RC: 0$' "$log.txt"; then
		pass=$((pass + 1))
	elif grep -q '^VGPU-FUZZ-FAIL-RC: no fault injection$' "$log.txt"; then
		echo "run-in-guest: no fault injection in this kernel: vgpu_fuzz -F not run"
	else
		echo "run-in-guest: vgpu_fuzz -F (allocations failing) did not run to its end"
		fail=$((fail + 1))
	fi
	if grep -q '^VGPU-KSFT-FAIL: vgpu.ko did not load again' "$log.txt"; then
		echo "run-in-guest: vgpu.ko did not load again, unmarked, between the kselftests under fault injection"
		fail=$((fail + 1))
	fi
	if grep -q '^VGPU-RELOAD-RC: 0$' "$log.txt"; then
		pass=$((pass + 1))
	else
		echo "run-in-guest: after the fuzzer, the module did not reload and run a job"
		fail=$((fail + 1))
	fi
	if grep -q '^VGPU-GUEST: KERNEL-ISSUE$' "$log.txt"; then
		show_reports
		echo "run-in-guest: reports in the guest kernel log: see $log"
		fail=$((fail + 1))
	fi
	if ! grep -q '^VGPU-GUEST: end$' "$log.txt"; then
		echo "run-in-guest: the guest did not finish (QEMU status $rc)"
		fail=$((fail + 1))
	fi
	echo "$pass passed, $fail failed"
	((fail == 0))
	exit
fi

if [[ $mode == bench ]]; then
	bad=0
	grep -q '^VGPU-SELFTEST-RC: 0$' "$log.txt" || { echo "run-in-guest: vgpu_bench failed"; bad=1; }
	grep -q '^VGPU-GUEST: KERNEL-ISSUE$' "$log.txt" &&
		{ echo "run-in-guest: a report in the guest kernel log"; bad=1; }
	exit $bad
fi

# ktap_count PROG: one line "PASS FAIL SKIP NOTE" for PROG's part of the
# runner's KTAP.  The runner prints "# selftests: vgpu: PROG", PROG's own
# KTAP prefixed with "# ", then "ok N selftests: vgpu: PROG" or
# "not ok N selftests: vgpu: PROG # TIMEOUT T seconds" / "# exit=N".
ktap_count() {
	awk -v prog="$1" '
	BEGIN { plan = ok = nok = sk = 0; tot = "" }
	function finish(res, pass, fail, skip, note) {
		if (tot != "") {
			split(tot, t, " ")
			pass = t[1] + t[3] + t[4]; fail = t[2] + t[6]; skip = t[5]
			if (res !~ /^ok/ && fail == 0) { fail = 1; note = "runner: " res }
		} else {
			pass = ok; fail = nok; skip = sk
			left = plan > 0 ? plan - ok - nok - sk : 0
			fail += left > 1 ? left : 1
			note = "no Totals: " (res == "" ? "did not finish" : res)
		}
		if (pass == 0 && fail == 0) { fail = 1; note = "ran no test" }
		print pass + 0, fail + 0, skip + 0, note
		done = 1
	}
	done { next }
	$0 == "# selftests: vgpu: " prog { inprog = 1; plan = 0; ok = nok = sk = 0; tot = ""; next }
	!inprog { next }
	/^# 1\.\.[0-9]+$/ { plan = substr($2, 4) + 0; next }
	/^# ok [0-9]+ / { if ($0 ~ /# SKIP/) sk++; else ok++; next }
	/^# not ok [0-9]+ / { nok++; next }
	/^# # Totals: pass:[0-9]+ fail:[0-9]+ xfail:[0-9]+ xpass:[0-9]+ skip:[0-9]+ error:[0-9]+$/ {
		s = $0; sub(/^# # Totals: /, "", s); gsub(/[a-z]+:/, "", s); tot = s; next
	}
	/^(not )?ok [0-9]+ selftests: vgpu: / {
		r = $0; sub(/^(not )?ok [0-9]+ selftests: vgpu: [^ ]+ ?/, "", r)
		finish(($0 ~ /^not / ? "not ok" : "ok") (r == "" ? "" : " " r))
	}
	END { if (!done) finish("") }
	' "$log.txt"
}

pass=0
fail=0
for p in $VGPU_KSFT_PROGS $VGPU_LIB_PROGS $VGPU_PTX_PROGS \
	${cuda_progs[@]+"${cuda_progs[@]}"}; do
	[[ -z ${VGPU_GUEST_ONLY:-} || " $VGPU_GUEST_ONLY " == *" $p "* ]] || continue
	read -r p_pass p_fail p_skip p_note < <(ktap_count "$p")
	# its time from the clock (guest_clock above): its first start, its
	# first end after that
	p_secs=$(awk -v p="$p" '
		$2 == "#" && $3 == "selftests:" && $5 == p && !b { b = $1; next }
		b && $0 ~ /^[0-9]+ (not )?ok [0-9]+ selftests: vgpu: / && $NF == p { printf "%.1f", ($1 - b) / 1000; exit }
		b && $0 ~ /^[0-9]+ (not )?ok [0-9]+ selftests: vgpu: / && $0 ~ (" " p " ") { printf "%.1f", ($1 - b) / 1000; exit }
		' "$work/clock" 2>/dev/null)
	echo "run-in-guest: $p: $p_pass passed, $p_fail failed, $p_skip skipped${p_note:+ ($p_note)}${p_secs:+, ${p_secs} s}"
	# the failed tests, by name
	sed -n "/^# selftests: vgpu: $p\$/,/^\(not \)\?ok [0-9]* selftests: vgpu: $p/p" "$log.txt" |
		grep -E '^# not ok [0-9]+ ' | sed 's/^# /run-in-guest:   /' || true
	pass=$((pass + p_pass))
	fail=$((fail + p_fail))
done
grep -E '^VGPU-LIBTEST: ' "$log.txt" | sed 's/^VGPU-LIBTEST: /run-in-guest: /' || true

# the driver's KUnit suites, where the kernel has KUnit (the debug kernel)
if grep -q '^VGPU-GUEST: kernel .*checkers:.* kunit' "$log.txt"; then
	sed -n '/^VGPU-KUNIT-BEGIN$/,/^VGPU-KUNIT-END$/p' "$log.txt" >"$work/kunit.ktap"
	kunit=$(scripts/kunit-count.sh "$work/kunit.ktap" | tee "$work/kunit.log" | tail -n 1) || true
	if [[ $kunit =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		k_secs=$(awk '$2 == "VGPU-KUNIT-BEGIN" { b = $1 } $2 == "VGPU-KUNIT-END" && b != "" { printf "%.1f", ($1 - b) / 1000; exit }' "$work/clock" 2>/dev/null)
		echo "run-in-guest: KUnit: $kunit${k_secs:+ (${k_secs} s)}"
		pass=$((pass + BASH_REMATCH[1]))
		fail=$((fail + BASH_REMATCH[2]))
		grep -E '^\[|^ *# .*(FAILED|Expected)' "$work/kunit.log" | grep -v PASSED || true
	else
		echo "run-in-guest: KUnit: no result"
		fail=$((fail + 1))
	fi
fi
if grep -q '^VGPU-GUEST: modprobe failed$' "$log.txt"; then
	echo "run-in-guest: modprobe vgpu failed"
	fail=$((fail + 1))
fi
if grep -q '^VGPU-GUEST: unload$' "$log.txt" && ! grep -q '^VGPU-GUEST: unloaded$' "$log.txt"; then
	echo "run-in-guest: rmmod vgpu failed"
	fail=$((fail + 1))
fi
if grep -q '^VGPU-GUEST: KERNEL-ISSUE$' "$log.txt"; then
	show_reports
	echo "run-in-guest: reports in the guest kernel log (WARN/BUG/oops, lockdep, KASAN, KFENCE, ODEBUG, list, refcount, kmemleak): see above"
	fail=$((fail + 1))
fi
# the device's PREEMPTIONS at the end (debugfs queues), of every device
preempts=$(grep -Eo ' preemptions [0-9]+ ' "$log.txt" | awk '{ n += $2 } END { print n + 0 }')
echo "run-in-guest: clusters preempted at the end: $preempts"
if [[ ${VGPU_EXPECT_PREEMPTIONS:-0} == 1 ]] && ((preempts == 0)); then
	echo "run-in-guest: VGPU_EXPECT_PREEMPTIONS=1 and the device preempted nothing"
	fail=$((fail + 1))
fi
if ! grep -q '^VGPU-GUEST: end$' "$log.txt"; then
	echo "run-in-guest: the guest did not finish (QEMU status $rc; timeout ${guest_timeout}s)"
	fail=$((fail + 1))
fi
echo "run-in-guest: log in ${log#"$top/"}"
echo "$pass passed, $fail failed"
((fail == 0))
