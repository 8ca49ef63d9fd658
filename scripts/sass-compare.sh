#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# sass-compare.sh BUILD: make bench's comparison of vGPU's generated code
# with NVIDIA's (issue 31 §5), on the corpus of real CUDA code
# (tests/corpus/*.cu, docs/ptx-corpus.md), no GPU needed:
#
#   - for each kernel of each corpus program (nvcc -ptx -arch=sm_90a -O3,
#     as the corpus tests are built), the vGPU program's instruction count
#     (vgpu-ptxas -S: the instruction lines of its .kernel block) beside
#     the SASS that ptxas -arch=sm_90a makes of the same PTX (the size of
#     the cubin's .text.KERNEL section over 16 bytes an instruction, read
#     with readelf; ptxas pads a kernel to 128 bytes, so short kernels'
#     ratios read low); the median and the worst ratio, target median <=
#     1.3x;
#   - the compile time of the whole corpus PTX per 1000 lines: vgpu-ptxas
#     beside ptxas, best of 3.
#
# Both print '@bench|' lines for scripts/bench.sh's table.  The PTX, the
# cubins and the per-kernel table are kept in BUILD/sass-compare/ (the
# table: kernels.txt).  nvcc runs only for a source newer than its PTX.
set -euo pipefail

cd "$(dirname "$0")/.."
build=${1:-build}
out=$build/sass-compare
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ptxas=${PTXAS:-$(dirname "$nvcc")/ptxas}
vptxas=$build/bin/vgpu-ptxas
mkdir -p "$out"

for t in "$nvcc" "$ptxas" "$vptxas"; do
	[[ -x $t ]] || { echo "sass-compare: $t is missing (make; CUDA 13 at /usr/local/cuda)" >&2; exit 1; }
done

ptxs=()
for cu in tests/corpus/*.cu; do
	n=$(basename "$cu" .cu)
	p=$out/$n.ptx
	if [[ ! -f $p || $cu -nt $p || tests/corpus/corpus.h -nt $p ]]; then
		# (its warnings, as the corpus build's, to a log beside)
		"$nvcc" -ptx -arch=sm_90a -O3 -Itests -o "$p.tmp" "$cu" 2>"$out/$n.nvcc.log" ||
			{ cat "$out/$n.nvcc.log" >&2; exit 1; }
		mv "$p.tmp" "$p"
	fi
	ptxs+=("$p")
done

# kernel -> instructions, one "NAME COUNT" line each
vgpu_counts() { # VGS
	# (a long name is shortened, the PTX name after '//')
	awk '/^\.kernel /{k=$2; if ($3 == "//") k=$4; next} /^\.func /{k=""; next}
	     k != "" && /^[ \t]+[^ \t\/].*;/ {n[k]++}
	     END {for (k in n) print k, n[k]}' "$1"
}
sass_counts() { # CUBIN (section sizes in hex: mawk has no strtonum)
	local name size
	readelf -SW "$1" 2>/dev/null |
		awk '{for (i = 1; i <= NF; i++) if ($i ~ /^\.text\./) print substr($i, 7), $(i + 4)}' |
		while read -r name size; do
			echo "$name $((16#$size / 16))"
		done
}

: >"$out/kernels.txt"
for p in "${ptxs[@]}"; do
	n=$(basename "$p" .ptx)
	"$ptxas" -arch=sm_90a -o "$out/$n.cubin" "$p"
	"$vptxas" -S -o "$out/$n.vgs" "$p"
	join <(vgpu_counts "$out/$n.vgs" | sort) <(sass_counts "$out/$n.cubin" | sort) |
		awk -v prog="$n" '{printf "%s %s %d %d %.3f\n", prog, $1, $2, $3, $2 / $3}' \
			>>"$out/kernels.txt"
done

nk=$(wc -l <"$out/kernels.txt")
if ((nk == 0)); then
	echo "sass-compare: no kernel matched between vgpu-ptxas and ptxas" >&2
	exit 1
fi
read -r median worst worst_name < <(sort -k5,5g "$out/kernels.txt" |
	awk '{r[NR] = $5; w = $5; wn = $1 ":" $2} END {
		m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
		printf "%.2f %.2f %s\n", m, w, wn }')
read -r vsum ssum < <(awk '{v += $3; s += $4} END {print v, s}' "$out/kernels.txt")
met="not met"
awk -v m="$median" 'BEGIN {exit !(m <= 1.3)}' && met=met
echo "vGPU instructions beside ptxas's SASS, $nk corpus kernels (-O3, sm_90a):"
echo "  total $vsum vGPU beside $ssum SASS; median ratio ${median}x, worst ${worst}x ($worst_name)"
echo "  target median <= 1.3x: $met   (per kernel: $out/kernels.txt)"
echo "@bench|vGPU code size beside ptxas SASS, median of $nk corpus kernels|${median}x|SASS 1.00x|${median}x|<= 1.3x|$met"
echo "@bench|vGPU code size beside ptxas SASS, worst corpus kernel|${worst}x ($worst_name)|SASS 1.00x|${worst}x||"

# compile time: best of 3 over the whole corpus PTX
best() { # CMD...: the best of 3 wall times in ns
	local b=0 t0 t1
	for _ in 1 2 3; do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1
		t1=$(date +%s%N)
		if ((b == 0 || t1 - t0 < b)); then b=$((t1 - t0)); fi
	done
	echo $b
}
lines=$(cat "${ptxs[@]}" | wc -l)
tv=0 tp=0
for p in "${ptxs[@]}"; do
	tv=$((tv + $(best "$vptxas" -o /dev/null "$p")))
	tp=$((tp + $(best "$ptxas" -arch=sm_90a -o /dev/null "$p")))
done
read -r v1k p1k ratio < <(awk -v v="$tv" -v p="$tp" -v l="$lines" \
	'BEGIN {printf "%.2f %.2f %.2f\n", v / 1e6 * 1000 / l, p / 1e6 * 1000 / l, v / p}')
echo "PTX compile time of the corpus ($lines lines): vgpu-ptxas $v1k ms per 1000 lines, ptxas $p1k ms (${ratio}x)"
echo "@bench|PTX compile of the corpus, per 1000 lines|$v1k ms|ptxas $p1k ms|${ratio}x||"
