#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/fuzz.sh FUZZ_DIR SECONDS SEED TARGET...: run each libFuzzer target
# FUZZ_DIR/fuzz_TARGET (make fuzz builds them; the target "device" is QEMU's
# qemu-fuzz-x86_64 --fuzz-target=vgpu-fuzz, make fuzz-device) for SECONDS with libFuzzer's
# -seed=SEED, from the corpus FUZZ_DIR/corpus-TARGET (kept between runs)
# seeded with FUZZ_DIR/seeds/TARGET (test_fuzz --write-seeds; for ptx the
# PTX corpus).  A crash (an oracle failure aborts) stops that target: its
# input is FUZZ_DIR/TARGET-crash-*; once fixed, keep it in
# tests/fuzz/regressions/TARGET/: each run replays those first, and make
# check replays the host targets' (test_fuzz).
#
# Prints per target the executions, the coverage (libFuzzer's sancov
# edges, "cov"), the corpus size, the crashes and the time, then
# "N passed, N failed" (a target that crashed or did not run fails).
#
# The targets run VGPU_FUZZ_JOBS at a time (default: the CPUs, at most
# the targets): each is one process on one CPU, and one after another
# they left all but one CPU idle for the whole of make check's fuzz
# suite.  Each keeps its own corpus, log, seed and time, as alone.
set -u -o pipefail

dir=$1 secs=$2 seed=$3
shift 3

# fuzz_one TARGET: its regressions, then SECONDS of fuzzing; writes its
# table row to $dir/TARGET.row and "pass" or "fail" to $dir/TARGET.result
fuzz_one() {
	local t=$1
	local bin=$dir/fuzz_$t corpus=$dir/corpus-$t log=$dir/$t.log
	local -a args=()
	local rc start took execs cov crashes reg

	if [[ $t == device ]]; then
		# QEMU's own harness with the vgpu-fuzz target (make fuzz-device)
		bin=${VGPU_QEMU_FUZZ:-build/qemu-fuzz/qemu-fuzz-x86_64}
		args=(--fuzz-target=vgpu-fuzz)
	fi
	mkdir -p "$corpus"
	[[ -d $dir/seeds/$t ]] && cp -n "$dir/seeds/$t"/* "$corpus"/ 2>/dev/null
	rm -f "$dir/$t"-crash-* "$dir/$t"-leak-* "$dir/$t"-timeout-* "$dir/$t"-oom-*
	# the crashers kept once fixed, run once each first
	reg=tests/fuzz/regressions/$t
	if [[ -d $reg ]] && ls "$reg"/* >/dev/null 2>&1; then
		if ! timeout -s KILL 300 "$bin" "${args[@]+"${args[@]}"}" "$reg"/* >"$dir/$t-regressions.log" 2>&1; then
			echo "fuzz: $t: a regression input fails again: see $dir/$t-regressions.log"
			grep -E 'oracle:|ERROR|SUMMARY|Running' "$dir/$t-regressions.log" | head -n 20
			printf '%-6s %12s\n' "$t" "regression" >"$dir/$t.row"
			echo fail >"$dir/$t.result"
			return
		fi
	fi
	echo "fuzz: $t: ${secs}s, seed $seed, corpus $(ls "$corpus" | wc -l) inputs"
	start=$SECONDS
	# libFuzzer's own -timeout is a SIGALRM, which QEMU's threads block:
	# a hang inside the device fuzzer is caught by this outer limit
	timeout -s KILL $((2 * secs + 300)) \
		"$bin" "${args[@]+"${args[@]}"}" -max_total_time="$secs" -seed="$seed" -timeout=20 -rss_limit_mb=3072 \
		-max_len=65536 -print_final_stats=1 -artifact_prefix="$dir/$t-" \
		"$corpus" >"$log" 2>&1
	rc=$?
	((rc == 137)) && echo "fuzz: $t: HUNG: killed after $((2 * secs + 300)) s; the last input ran is in the corpus or the log"
	took=$((SECONDS - start))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -Eo ' cov: [0-9]+' "$log" | tail -n 1 | grep -Eo '[0-9]+')
	crashes=$(ls "$dir/$t"-crash-* "$dir/$t"-leak-* "$dir/$t"-timeout-* "$dir/$t"-oom-* 2>/dev/null | wc -l)
	if ((rc != 0 || crashes != 0)) || [[ -z $execs ]]; then
		echo "fuzz: $t: FAILED (status $rc); the end of $log:"
		grep -E 'oracle:|ERROR|SUMMARY|artifact|==[0-9]+==' "$log" | head -n 20
		ls "$dir/$t"-crash-* "$dir/$t"-leak-* "$dir/$t"-timeout-* "$dir/$t"-oom-* 2>/dev/null
		echo fail >"$dir/$t.result"
	else
		echo pass >"$dir/$t.result"
	fi
	printf '%-6s %12s %8s %8s %8s %6ss\n' "$t" "${execs:-?}" "${cov:-?}" \
		"$(ls "$corpus" | wc -l)" "$crashes" "$took" >"$dir/$t.row"
}

njobs=${VGPU_FUZZ_JOBS:-$(nproc)}
((njobs > $#)) && njobs=$#
((njobs < 1)) && njobs=1
running=0
for t in "$@"; do
	rm -f "$dir/$t.row" "$dir/$t.result"
	if ((running >= njobs)); then
		wait -n
		running=$((running - 1))
	fi
	fuzz_one "$t" &
	running=$((running + 1))
done
wait

pass=0
fail=0
echo
printf '%-6s %12s %8s %8s %8s %7s\n' target execs cov corpus crashes time
for t in "$@"; do
	if [[ -s $dir/$t.row ]]; then
		cat "$dir/$t.row"
	else
		printf '%-6s %12s\n' "$t" "no result"
	fi
	if [[ $(cat "$dir/$t.result" 2>/dev/null) == pass ]]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
((fail == 0))
