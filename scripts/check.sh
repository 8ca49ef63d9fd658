#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The `make check` driver.  Builds and runs the host test suites in three
# variants, in order:
#
#   1. gcc                   into build/
#   2. clang (-Werror)       into build-clang/
#   3. gcc, ASan + UBSan     into build-asan/
#
# (after the gcc variant: its corpus programs under 10 random schedules
# and once more with VGPU_SIM_THREADS=4, VGPU_CHECK_SIM_THREADS=0 skips
# that), then each libFuzzer target for a minute (make fuzz; VGPU_CHECK_FUZZ=0
# leaves it out), and then the device suite: QEMU with the vgpu-pci device (built by
# scripts/build-qemu.sh into build/qemu-build), the qtest device tests
# (tests/qtest) and one boot of the guest smoke test.  VGPU_CHECK_DEVICE=0
# leaves the device suite out.  Last, make run (every example on both
# backends, one guest boot), vgpu.ko's kselftests in the guest,
# on Debian's 6.12 kernel (make check-guest), there again with every launch
# preempted every 997 warp-instructions (make check-guest-preempt's first N;
# VGPU_CHECK_GUEST_PREEMPT=0 leaves it out) and on the debug kernel with
# the KUnit suites (make check-guest-debug; VGPU_CHECK_GUEST_DEBUG=0 leaves
# that out, VGPU_CHECK_GUEST=0 all four).
#
# Each variant builds everything (tools, tests and benchmarks, so that
# every file is compiled warning-free by both compilers) and then runs
# every test binary through scripts/run-tests.sh.  A variant whose build
# fails counts as one failure.  The last line is the grand total over
# every suite of every variant, "N passed, N failed"; the exit status is
# non-zero on any failure.
set -u -o pipefail

cd "$(dirname "$0")/.."
start=$SECONDS
log=$(mktemp)
# the kernels installed on the host now: the last suite checks that make
# check added none (tests/host/test-host-packages.sh)
host_kernels=$(mktemp)
# (and the background's builds, below, when make check stops before them)
trap 'rm -f "$log" "$host_kernels"
	[[ -z ${prebuild_pid:-} ]] || kill -TERM -- "-$prebuild_pid" 2>/dev/null
	for p in ${stream_pids[@]+"${stream_pids[@]}"}; do kill -TERM -- "-$p" 2>/dev/null; done' EXIT
dpkg-query -W -f='${db:Status-Status} ${Package}\n' 'linux-image-*' 'linux-headers-*' 2>/dev/null |
	sed -n 's/^installed //p' | sort >"$host_kernels"

grand_pass=0
grand_fail=0
results=()
# each suite's wall time, build included, goes beside its counts in the
# summary: the time since the previous suite's tally
lane_start=$SECONDS

# lane_time: set lane_secs to the seconds since the previous tally, and
# start the next lane (not in a $(...): its assignments would be lost)
lane_secs=0
lane_time() {
	lane_secs=$((SECONDS - lane_start))
	lane_start=$SECONDS
}

# tally TITLE STATUS: add a suite's counts, the last "N passed, N failed"
# line in $log (a runner or make may print more after it), to the totals.
# A suite without that line, or that failed with no failure counted,
# counts one failure.
tally() {
	local title=$1 rc=$2 pass=0 fail=1

	if [[ $(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1) =~ \
		^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		pass=${BASH_REMATCH[1]}
		fail=${BASH_REMATCH[2]}
	fi
	if ((rc != 0 && fail == 0)); then
		fail=1
	fi
	lane_time
	results+=("$(printf '%-22s %d passed, %d failed  (%ds)' "$title" "$pass" "$fail" "$lane_secs")")
	grand_pass=$((grand_pass + pass))
	grand_fail=$((grand_fail + fail))
}

# prebuild: the long builds of the later lanes, started at once in the
# background, so that they take the CPU the lanes leave idle (their
# tests, fuzzers and guests mostly keep one CPU busy) instead of running
# alone when their lane comes, in the order the lanes need them: QEMU with
# the device (scripts/build-qemu.sh) and the debug kernel
# (scripts/build-debug-kernel.sh), which the device and guest lanes' stream
# waits for, at nice 5 (below the guests, whose tests wait on timers,
# above the host lanes' builds at 10); QEMU built for fuzzing, the last
# host lane's, once the gcc lane has built build/bin/vgpu-as (which it
# grafts), at nice 19.  (Cold, on 2 vCPUs, the debug kernel's build at
# nice 19 behind the lanes took 17 minutes to reach its compile, with the
# stream waiting for it.)  Each script takes a lock, so a
# lane that needs its result waits for it; the lanes run the same scripts
# again, which then find it up to date, or build it and report any error
# in that lane.  The background's own status is ignored, its output kept
# in build/prebuild.log.  The lane times in the summary then count a wait
# for a build, not the build.  (Measured on 2 vCPUs: QEMU's two builds
# cold, alone, took about 14 of make check's 86 minutes.)
# VGPU_CHECK_PREBUILD=0 leaves it out.
prebuild_go=build/.check-prebuild-go
prebuild() {
	local waited=0

	nice -n 5 scripts/build-qemu.sh
	if [[ ${VGPU_CHECK_GUEST:-1} != 0 && ${VGPU_CHECK_GUEST_DEBUG:-1} != 0 ]]; then
		nice -n 5 scripts/build-debug-kernel.sh
	fi
	if [[ ${VGPU_CHECK_FUZZ:-1} != 0 ]]; then
		while [[ ! -e $prebuild_go ]] && ((waited < 3600)); do
			sleep 5
			waited=$((waited + 5))
		done
		VGPU_QEMU_FLAVOUR=fuzz nice -n 19 scripts/build-qemu.sh
	fi
}
prebuild_pid=
mkdir -p build
rm -f "$prebuild_go"
if [[ ${VGPU_CHECK_PREBUILD:-1} != 0 ]]; then
	# in a process group of its own (set -m), which the EXIT trap stops
	set -m
	prebuild >build/prebuild.log 2>&1 </dev/null &
	prebuild_pid=$!
	set +m
	echo "make check: long builds started in the background (pid $prebuild_pid, build/prebuild.log)"
fi

# variant TITLE BUILD-DIR [ENV=VALUE...] -- [MAKE-VARIABLE=VALUE...]
variant() {
	local title=$1 build=$2
	shift 2
	local -a env=() vars=()
	while (($#)) && [[ $1 != -- ]]; do
		env+=("$1")
		shift
	done
	shift
	vars=("$@")

	local -a tests=() benches=()
	local f
	# every host test of the Makefile (make check-host's list): the unit
	# tests, the library as installed (test_install), the CUDA programs
	# built by nvcc (test_cudart*, the samples, the corpus), the README's
	# commands
	mapfile -t tests < <(make -s --no-print-directory BUILD="$build" \
		"${vars[@]+"${vars[@]}"}" print-tests)
	# the corpus (minutes under the sanitizers) runs in the gcc and clang
	# lanes only, to keep make check's time: VGPU_CHECK_CORPUS_ALL=1 adds
	# it to every lane
	if [[ $build == build-asan && ${VGPU_CHECK_CORPUS_ALL:-0} != 1 ]]; then
		local -a kept=()
		for f in "${tests[@]}"; do
			[[ $f == */test_corpus_* ]] || kept+=("$f")
		done
		tests=("${kept[@]}")
	fi
	for f in tests/bench/bench_*.c; do
		[[ -e $f ]] && benches+=("$build/bench/$(basename "$f" .c)")
	done

	echo
	echo "==== $title ($build) ===="
	# qtests: the device tests' binaries are built (not run) here too, so
	# that both compilers and the sanitizers see them.
	# at a lower priority than the guests beside it (the stream, below),
	# whose tests wait on timers
	if ! nice -n "$((${#stream_pids[@]} ? 10 : 0))" \
		make -j2 --no-print-directory BUILD="$build" "${vars[@]+"${vars[@]}"}" \
		all "${tests[@]+"${tests[@]}"}" "${benches[@]+"${benches[@]}"}" qtests; then
		touch "$prebuild_go"
		echo "==== $title: BUILD FAILED"
		lane_time
		results+=("$(printf '%-22s build failed  (%ds)' "$title" "$lane_secs")")
		grand_fail=$((grand_fail + 1))
		return
	fi

	# build/bin/vgpu-as is there: the background may build QEMU for fuzzing
	touch "$prebuild_go"
	env "${env[@]+"${env[@]}"}" scripts/run-tests.sh "$build" \
		"${tests[@]+"${tests[@]}"}" | tee "$log"
	tally "$title" "${PIPESTATUS[0]}"
}

# fuzz: each libFuzzer target of make fuzz, then the device fuzzer (make
# fuzz-device), for VGPU_FUZZ_SECONDS (default 60) each with a fixed seed,
# from the seeds and the corpus kept in build-fuzz/; any crash or oracle
# failure fails it.  VGPU_CHECK_FUZZ=0 skips both.
fuzz_suite() {
	local title="fuzz (libFuzzer)"

	echo
	echo "==== $title ===="
	make --no-print-directory fuzz FUZZ_SECONDS="${VGPU_FUZZ_SECONDS:-60}" 2>&1 | tee "$log"
	tally "$title" "${PIPESTATUS[0]}"

	# the device: QEMU built for fuzzing (its first build is long), then
	# vgpu-fuzz as long as each target above
	title="fuzz (device)"
	echo
	echo "==== $title ===="
	make --no-print-directory fuzz-device FUZZ_SECONDS="${VGPU_FUZZ_SECONDS:-60}" 2>&1 |
		grep -v 'multiple common of\|overridden by definition' | tee "$log"
	tally "$title" "${PIPESTATUS[0]}"
}

# the guest's ioctl fuzzer on the debug kernel (make fuzz-guest), after the
# guest suites: any kernel report, a failed reload or a leak fails it
fuzz_guest_suite() {
	local title="fuzz (guest ioctls)"

	echo
	echo "==== $title ===="
	make --no-print-directory fuzz-guest FUZZ_SECONDS="${VGPU_FUZZ_SECONDS:-60}" 2>&1 | tee "$log"
	tally "$title" "${PIPESTATUS[0]}"
}

# device: the QEMU device, after the host variants so that their results
# come first.  Builds QEMU with the device (scripts/build-qemu.sh, which
# installs what it needs), then runs the qtest device tests and one boot
# of the guest smoke test.  VGPU_CHECK_DEVICE=0 skips it.
device_suite() {
	local title="device (QEMU)" f
	local -a tests=()

	echo
	echo "==== $title ===="
	if ! scripts/build-qemu.sh ||
		! make -j2 --no-print-directory BUILD=build CC=gcc all qtests; then
		echo "==== $title: BUILD FAILED"
		lane_time
		results+=("$(printf '%-22s build failed  (%ds)' "$title" "$lane_secs")")
		grand_fail=$((grand_fail + 1))
		return
	fi
	for f in tests/qtest/test_*.c; do
		[[ -e $f ]] && tests+=("build/qtest/$(basename "$f" .c)")
	done
	tests+=(scripts/test-guest-smoke.sh)
	scripts/run-tests.sh build "${tests[@]}" | tee "$log"
	tally "$title" "${PIPESTATUS[0]}"
}

# guest: vgpu.ko and its kselftests in the guest (make check-guest builds
# the module against Debian's headers, the suite, QEMU and the guest, then
# boots it once; it fails on any test failure and on WARN/BUG/oops in the
# guest's kernel log).  VGPU_CHECK_GUEST=0 skips it.
guest_suite() {
	local title="guest (vgpu.ko)"

	echo
	echo "==== $title ===="
	make --no-print-directory check-guest 2>&1 | tee "$log"
	tally "$title" "${PIPESTATUS[0]}"
}

# make run, the front door: every example on the host (sim) and in the
# guest (drm), one boot; it counts as one test.  (It was broken for a
# session by a module the guest's initramfs lacked, with every other
# suite green: now make check runs it too.)
run_suite() {
	local title="make run" rc

	echo
	echo "==== $title ===="
	make --no-print-directory run 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	if ((rc == 0)); then
		echo "1 passed, 0 failed" >>"$log"
	else
		echo "0 passed, 1 failed" >>"$log"
	fi
	tally "$title" "$rc"
}

# guest with forced preemption: the same suites on Debian's kernel, each
# launch preempted every N warp-instructions, one tally per N.  make check
# runs N = 997 (VGPU_CHECK_PREEMPT_EVERY, a list); make check-guest-preempt
# runs 997 and 4099.  (Both in make check took 3 more minutes of the CI's
# 90 on a 2-core machine, 6 where its guests run slower; 997 preempts the
# most.)  VGPU_CHECK_GUEST_PREEMPT=0 skips it.
guest_preempt_suite() {
	local n

	for n in ${VGPU_CHECK_PREEMPT_EVERY:-997}; do
		echo
		echo "==== guest (preempt-every=$n) ===="
		make --no-print-directory check-guest-preempt PREEMPT_EVERY=$n 2>&1 | tee "$log"
		tally "guest preempt-every=$n" "${PIPESTATUS[0]}"
	done
}

# guest on the debug kernel: the same suites and the driver's KUnit suites
# on a kernel built from linux-source-6.12 with lockdep, KASAN, kmemleak
# and the other checkers (kernel/debug.config; scripts/build-debug-kernel.sh
# caches it outside the clone).  Any checker's report fails it.
# VGPU_CHECK_GUEST_DEBUG=0 skips it.
guest_debug_suite() {
	local title="guest (debug kernel)"

	echo
	echo "==== $title ===="
	make --no-print-directory check-guest-debug 2>&1 | tee "$log"
	tally "$title" "${PIPESTATUS[0]}"
}

# The device and guest lanes, in two streams.  The first, one lane after
# another: QEMU's qtests and a guest smoke boot, make run, vgpu.ko's
# kselftests on Debian's kernel, with forced preemption, on the debug
# kernel.  The second: the guest's ioctl fuzzer on the debug kernel, which
# starts when the first reaches its debug lane (the two then run side by
# side, the host lanes mostly done by then).
device_guest_lanes() {
	if [[ ${VGPU_CHECK_DEVICE:-1} != 0 ]]; then
		device_suite
	fi
	if [[ ${VGPU_CHECK_GUEST:-1} != 0 ]]; then
		run_suite
		guest_suite
		if [[ ${VGPU_CHECK_GUEST_PREEMPT:-1} != 0 ]]; then
			guest_preempt_suite
		fi
		touch "$stream_base/debug-go"
		if [[ ${VGPU_CHECK_GUEST_DEBUG:-1} != 0 ]]; then
			guest_debug_suite
		fi
	fi
	touch "$stream_base/debug-go"
}
guest_fuzz_lane() {
	local waited=0

	[[ ${VGPU_CHECK_GUEST:-1} != 0 && ${VGPU_CHECK_GUEST_DEBUG:-1} != 0 &&
		${VGPU_CHECK_FUZZ:-1} != 0 ]] || return 0
	# a stream that stopped before touching it: go after 2 hours anyway
	while [[ ! -e $stream_base/debug-go ]] && ((waited < 7200)); do
		sleep 5
		waited=$((waited + 5))
	done
	lane_start=$SECONDS
	fuzz_guest_suite
}

# A stream: lanes run in the background beside the host lanes after the
# gcc lane (which builds what they read in build/; the other host lanes
# build into build-clang/, build-asan/ and build-fuzz/), its output in
# build/check-stream/NAME/out, printed whole when it ends; its counts
# join the totals.  A guest keeps about one CPU of two busy (its vCPU, or
# the device's thread while the vCPU waits), as the host lanes' tests do:
# side by side they take about the time of the longer.
# VGPU_CHECK_STREAM=0 runs them after the host lanes instead, one after
# another, as before.
stream_base=build/check-stream
stream_names=()
stream_pids=()
# start_stream NAME FUNCTION: FUNCTION's lanes in the background, in a
# process group of their own (set -m) that the EXIT trap stops
start_stream() {
	local d=$stream_base/$1

	mkdir -p "$d"
	echo "make check: $1 lanes run in the background from here ($d/out)"
	set -m
	(
		results=()
		grand_pass=0
		grand_fail=0
		lane_start=$SECONDS
		log=$d/lane.log
		"$2"
		printf '%s\n' "${results[@]+"${results[@]}"}" >"$d/results"
		echo "$grand_pass $grand_fail" >"$d/totals"
	) >"$d/out" 2>&1 </dev/null &
	stream_pids+=($!)
	stream_names+=("$1")
	set +m
}
start_streams() {
	[[ ${VGPU_CHECK_DEVICE:-1} != 0 || ${VGPU_CHECK_GUEST:-1} != 0 ]] || return 0
	rm -rf "$stream_base"
	mkdir -p "$stream_base"
	echo
	start_stream device-guest device_guest_lanes
	start_stream guest-fuzz guest_fuzz_lane
}
# join_streams: wait for each stream, print its output and add its counts
join_streams() {
	local -a r=()
	local i d p f

	if [[ ${VGPU_CHECK_STREAM:-1} == 0 ]]; then
		mkdir -p "$stream_base"
		device_guest_lanes
		guest_fuzz_lane
		return
	fi
	for i in "${!stream_pids[@]}"; do
		d=$stream_base/${stream_names[i]}
		wait "${stream_pids[i]}" 2>/dev/null
		cat "$d/out"
		if [[ -f $d/totals ]] && read -r p f <"$d/totals"; then
			mapfile -t r <"$d/results"
			results+=("${r[@]+"${r[@]}"}")
			grand_pass=$((grand_pass + p))
			grand_fail=$((grand_fail + f))
		else
			results+=("${stream_names[i]} lanes: stopped without their totals")
			grand_fail=$((grand_fail + 1))
		fi
	done
	stream_pids=()
}

variant "gcc" build -- CC=gcc
if [[ ${VGPU_CHECK_STREAM:-1} != 0 ]]; then
	start_streams
fi
# the corpus programs of the gcc build under VGPU_CHECK_SCHEDULES random
# schedules (default 10; make check-schedules runs 100), 0 skips it
schedules=${VGPU_CHECK_SCHEDULES:-10}
if ((schedules > 0)); then
	echo
	echo "==== corpus under $schedules random schedules ===="
	scripts/corpus-schedules.sh build "$schedules" 2>&1 | tee "$log"
	tally "corpus, $schedules schedules" "${PIPESTATUS[0]}"
fi
# the corpus programs once more with each launch shared by 4 SMs on host
# threads (VGPU_SIM_THREADS, docs/libvgpu.md): look-backs must progress,
# results must not change; and every launch through a parameter page
# (VGPU_SIM_PARAM_PAGES=1), the path the drm backend takes, which the
# other sim lanes take only for kernels that need one;
# VGPU_CHECK_SIM_THREADS=0 skips it
if [[ ${VGPU_CHECK_SIM_THREADS:-1} != 0 ]]; then
	echo
	echo "==== corpus on VGPU_SIM_THREADS=4, parameter pages ===="
	VGPU_SIM_THREADS=4 VGPU_SIM_PARAM_PAGES=1 \
		scripts/run-tests.sh build build/tests/test_corpus_* 2>&1 | tee "$log"
	tally "corpus, 4 SM threads, param pages" "${PIPESTATUS[0]}"
fi
variant "clang" build-clang -- CC=clang
variant "gcc ASan+UBSan" build-asan \
	ASAN_OPTIONS=detect_leaks=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	-- CC=gcc SAN=1
if [[ ${VGPU_CHECK_FUZZ:-1} != 0 ]]; then
	fuzz_suite
fi

# the device and guest lanes' streams (started after the gcc lane) end
join_streams

# the background's builds have ended by now (each lane waited for its
# own); a make check cut short leaves none running: see the trap above
if [[ -n $prebuild_pid ]]; then
	wait "$prebuild_pid" 2>/dev/null
	prebuild_pid=
fi
lane_start=$SECONDS

# last, the host: no kernel installed on it by any script above
echo
echo "==== host packages ===="
VGPU_HOST_KERNELS_BEFORE=$host_kernels scripts/run-tests.sh build tests/host/test-host-packages.sh | tee "$log"
tally "host packages" "${PIPESTATUS[0]}"

echo
echo "==== make check: $((SECONDS - start))s"
for line in "${results[@]}"; do
	echo "  $line"
done
echo "$grand_pass passed, $grand_fail failed"
((grand_fail == 0))
