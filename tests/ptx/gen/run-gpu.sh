#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/ptx/gen/run-gpu.sh: on a machine with an NVIDIA GPU and CUDA 13
# (nvcc and ptxas on PATH or in /usr/local/cuda/bin), from the repository
# root: generate ptxgen's modules (tests/ptx/gen/ptxgen, Python 3),
# assemble each with ptxas -arch=sm_90a, build the runner
# (tests/ptx/gen/ptxgen-run.cu, CUDA driver API) and run every kernel,
# writing tests/ptx/gen/MODULE.expected: a header naming the GPU, its
# driver and ptxas, the hash of the PTX and inputs, then each kernel's
# words.  test_ptxgen compares the front end's results with them.
#
# Work files go to ${PTXGEN_WORK:-build/ptxgen-gpu}.  About a minute on
# an H200 (the ptxas runs in parallel, one per module).
set -euo pipefail

cd "$(dirname "$0")/../../.."
export PATH=$PATH:/usr/local/cuda/bin
work=${PTXGEN_WORK:-build/ptxgen-gpu}
cuda=$(dirname "$(dirname "$(command -v nvcc)")")
start=$SECONDS
trap 'rm -f tests/ptx/gen/*.expected.tmp' EXIT

mkdir -p "$work"
python3 tests/ptx/gen/ptxgen "$work"
nvcc -O2 -o "$work/ptxgen-run" tests/ptx/gen/ptxgen-run.cu -L"$cuda/lib64/stubs" -lcuda
mapfile -t modules <"$work/modules.txt"
printf '%s\n' "${modules[@]}" |
	xargs -P "$(nproc)" -I{} ptxas -arch=sm_90a "$work/{}.ptx" -o "$work/{}.cubin"
ptxas_version=$(ptxas --version | sed -n 's/.*\(V[0-9][0-9.]*\).*/\1/p' | tail -n 1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1 ||
	true)
note="driver ${driver:-unknown}, ptxas $ptxas_version -arch=sm_90a"
failed=()
for m in "${modules[@]}"; do
	# a module whose kernels hang stops here, not the machine; the others
	# go on.  A kernel that faults ends its process (CUDA's errors are
	# sticky): the next process starts at the kernel after it.
	: >"tests/ptx/gen/$m.expected.tmp"
	ok=1
	while :; do
		first=$(grep -c '^kernel ' "tests/ptx/gen/$m.expected.tmp" || true)
		rc=0
		timeout 120 "$work/ptxgen-run" --note "$note" --first "$first" "$work" "$m" \
			>>"tests/ptx/gen/$m.expected.tmp" || rc=$?
		((rc == 3)) && continue
		((rc == 0)) || ok=0
		break
	done
	if ((!ok)); then
		echo "run-gpu.sh: $m: ptxgen-run failed or timed out (tests/ptx/gen/$m.expected.tmp kept as $work/$m.partial)"
		mv "tests/ptx/gen/$m.expected.tmp" "$work/$m.partial"
		failed+=("$m")
		continue
	fi
	mv "tests/ptx/gen/$m.expected.tmp" "tests/ptx/gen/$m.expected"
	echo "run-gpu.sh: tests/ptx/gen/$m.expected: $(grep -c '^kernel .* error ' \
		"tests/ptx/gen/$m.expected" || true) kernels the GPU failed, $(grep -c '^kernel ' \
		"tests/ptx/gen/$m.expected") in all"
done
echo "run-gpu.sh: ${#modules[@]} modules in $((SECONDS - start)) s, ${#failed[@]} failed${failed[*]:+: ${failed[*]}}; commit tests/ptx/gen/*.expected"
((${#failed[@]} == 0))
