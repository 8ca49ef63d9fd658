#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_install.sh BUILD [CC=...] [SAN=0|1] [SAN_FLAGS=...]
#
# libvgpu as a user gets it (the Makefile's BUILD/tests/test_install runs
# this with the build's compiler and sanitizer flags):
#
#   symbols          libvgpu.so exports exactly libvgpu/libvgpu.sym, which
#                    is vgpu.h's API (scripts/check-symbols.sh)
#   soname           its SONAME is libvgpu.so.2; it needs libdrm
#   install          `make install PREFIX=TMP` puts the libraries, the
#                    headers, vgpu.pc and the tools where they belong (its
#                    second half, install-files: a test builds nothing, so
#                    it tests what the variant built)
#   header_alone     <vgpu.h> compiles on its own with pkg-config's flags
#   header_cxx       and as C++ (g++ or clang++ as CC, -std=c++17
#                    -pedantic): CUDA host programs are C++
#   example_shared   examples/hello.c built with `pkg-config --cflags --libs
#                    vgpu` against the installed copy runs (sim backend)
#   example_static   the same linked with libvgpu.a and
#                    `pkg-config --static --libs vgpu`
#   tools_installed  the installed vgpu-run runs a kernel, vgpu-info lists
#   cuda_library     libcuda.so.1: SONAME libcuda.so.1, exports only cu*
#                    symbols, and every function cuda.h declares (by its
#                    versioned name, cuMemAlloc -> cuMemAlloc_v2, and its
#                    _ptsz/_ptds form where it has one)
#   cuda_header_abi  our cuda.h (and the cuda_types.h it includes) against
#                    NVIDIA's (/usr/local/cuda/include):
#                    every enumerator and constant our header defines has
#                    NVIDIA's value, and the structures' sizes, alignments
#                    and field offsets are NVIDIA's (one program compiled
#                    with each header, outputs compared)
#   cuda_example     examples/cuda/drv_saxpy.c built with `pkg-config
#                    --cflags --libs vgpu-cuda` against the installed copy
#                    runs on the installed libcuda.so.1 (sim backend)
#   cudart           libcudart.so.13: SONAME libcudart.so.13, exports only
#                    cuda* and __cuda* under the version node
#                    libcudart.so.13; test_cudart (built by nvcc with
#                    -cudart shared) run with LD_LIBRARY_PATH set to the
#                    installed lib/vgpu-cuda loads the installed copy and
#                    passes
#   uninstall        `make uninstall` removes every installed file
#
# Prints KTAP as the kselftests do: "TAP version 13", the plan "1..13",
# "ok N NAME" or "not ok N NAME" per test with diagnostics as "# " lines,
# and last "# Totals: pass:N fail:N xfail:0 xpass:0 skip:0 error:0"
# (scripts/run-tests.sh counts that line).  Exits non-zero on a failure.
# No `producer | grep -q` below: grep exits at its first match and, under
# pipefail, the producer's SIGPIPE would fail the pipeline (ldd did).
set -u -o pipefail

build=${1:?usage: test_install.sh BUILD [CC=...] [SAN=0|1] [SAN_FLAGS=...]}
shift
CC=cc
SAN=0
SAN_FLAGS=
for a in "$@"; do
	case $a in
	CC=*) CC=${a#CC=} ;;
	SAN=*) SAN=${a#SAN=} ;;
	SAN_FLAGS=*) SAN_FLAGS=${a#SAN_FLAGS=} ;;
	*) echo "test_install: unknown argument $a" >&2; exit 2 ;;
	esac
done
cd "$(dirname "$0")/../.." || exit 2
top=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
# a make of our own, not the caller's jobserver
unset MAKEFLAGS MFLAGS MAKELEVEL
export VGPU_BACKEND=sim

tests=(symbols soname install header_alone header_cxx example_shared example_static
	tools_installed cuda_library cuda_header_abi cuda_example cudart uninstall)
pass=0
fail=0
n=0
result() { # NAME STATUS
	n=$((n + 1))
	if (($2 == 0)); then
		echo "ok $n $1"
		pass=$((pass + 1))
	else
		echo "not ok $n $1"
		fail=$((fail + 1))
	fi
}
# diagnostics: "# " before each line of stdin
diag() { sed 's/^/# /'; }

echo "TAP version 13"
echo "1..${#tests[@]}"

# ---- the shared library ----
st=0
out=$(scripts/check-symbols.sh "$build/libvgpu.so" 2>&1) || st=1
diag <<<"$out"
result symbols $st

st=0
soname=$(readelf -d "$build/libvgpu.so.2" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname == libvgpu.so.2 ]] || { echo "# SONAME '$soname'"; st=1; }
grep -q <<<"$(readelf -d "$build/libvgpu.so.2")" 'NEEDED.*\[libdrm\.so' ||
	{ echo "# libvgpu.so.2 does not need libdrm"; st=1; }
[[ $(readlink "$build/libvgpu.so") == libvgpu.so.2 ]] ||
	{ echo "# $build/libvgpu.so is not a link to libvgpu.so.2"; st=1; }
result soname $st

# ---- make install ----
st=0
make -s -C "$top" BUILD="$build" CC="$CC" SAN="$SAN" PREFIX="$prefix" \
	install-files >"$tmp/install.log" 2>&1 || { diag <"$tmp/install.log"; st=1; }
for f in lib/libvgpu.a lib/libvgpu.so.2 lib/libvgpu.so \
	lib/pkgconfig/vgpu.pc include/vgpu/vgpu.h include/vgpu/vgpu_hw.h \
	include/vgpu/vgpu_isa.h include/vgpu/vgpu_isa_table.h \
	include/vgpu/vgpu_drm.h bin/vgpu-run bin/vgpu-info bin/vgpu-as \
	bin/vgpu-objdump lib/vgpu-cuda/libcuda.so.1 lib/vgpu-cuda/libcuda.so \
	lib/pkgconfig/vgpu-cuda.pc include/vgpu/cuda/cuda.h include/vgpu/cuda/cuda_types.h \
	lib/vgpu-cuda/libcudart.so.13 lib/vgpu-cuda/libcudart.so; do
	[[ -e $prefix/$f ]] || { echo "# not installed: $f"; st=1; }
done
[[ -e $prefix/include/vgpu/vgpu_asm.h ]] &&
	{ echo "# vgpu_asm.h is installed but not public"; st=1; }
result install $st

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cflags=$(pkg-config --cflags vgpu) || cflags=MISSING
libs=$(pkg-config --libs vgpu) || libs=MISSING
static_libs=$(pkg-config --static --libs vgpu) || static_libs=MISSING
echo "# pkg-config --cflags: $cflags"
echo "# pkg-config --libs: $libs"
echo "# pkg-config --static --libs: $static_libs"

# ---- compiling against the installed copy ----
st=0
printf '#include <vgpu.h>\nint main(void) { return vgpu_backend_name(VGPU_BACKEND_SIM) == 0; }\n' \
	>"$tmp/alone.c"
# shellcheck disable=SC2086 # flags lists
out=$($CC -std=c11 -Wall -Wextra -Werror -pedantic $SAN_FLAGS $cflags \
	-o "$tmp/alone" "$tmp/alone.c" $libs 2>&1) || { diag <<<"$out"; st=1; }
if ((st == 0)); then
	LD_LIBRARY_PATH=$prefix/lib "$tmp/alone" 2>&1 | diag
	((PIPESTATUS[0] == 0)) || { echo "# alone failed"; st=1; }
fi
result header_alone $st

st=0
case $CC in
*clang*) cxx=${CC/clang/clang++} ;;
*) cxx=${CC/gcc/g++} ;;
esac
cp "$tmp/alone.c" "$tmp/alone.cc"
# shellcheck disable=SC2086 # flags lists
out=$($cxx -std=c++17 -Wall -Wextra -Werror -pedantic $SAN_FLAGS $cflags \
	-o "$tmp/alone-cxx" "$tmp/alone.cc" $libs 2>&1) || { diag <<<"$out"; st=1; }
if ((st == 0)); then
	LD_LIBRARY_PATH=$prefix/lib "$tmp/alone-cxx" 2>&1 | diag
	((PIPESTATUS[0] == 0)) || { echo "# alone-cxx failed"; st=1; }
fi
result header_cxx $st

st=0
# shellcheck disable=SC2086
out=$($CC -std=c11 -Wall -Wextra -Werror $SAN_FLAGS $cflags -o "$tmp/hello" \
	examples/hello.c $libs 2>&1) || { diag <<<"$out"; st=1; }
if ((st == 0)); then
	grep -q <<<"$(readelf -d "$tmp/hello")" 'NEEDED.*\[libvgpu\.so\.2\]' ||
		{ echo "# hello does not need libvgpu.so.2"; st=1; }
	LD_LIBRARY_PATH=$prefix/lib "$tmp/hello" sim >"$tmp/hello.out" 2>&1 || st=1
	grep -q '^hello: PASS' "$tmp/hello.out" || st=1
	((st == 0)) || diag <"$tmp/hello.out"
	# it used the installed library, not another copy
	grep -q <<<"$(LD_LIBRARY_PATH=$prefix/lib ldd "$tmp/hello")" "$prefix/lib/libvgpu.so.2" ||
		{ echo "# hello did not load $prefix/lib/libvgpu.so.2"; st=1; }
fi
result example_shared $st

st=0
# libvgpu.a rather than the .so that sits beside it
# shellcheck disable=SC2086
out=$($CC -std=c11 -Wall -Wextra -Werror $SAN_FLAGS $cflags -o "$tmp/hello-static" \
	examples/hello.c ${static_libs/-lvgpu/-l:libvgpu.a} 2>&1) ||
	{ diag <<<"$out"; st=1; }
if ((st == 0)); then
	grep -q <<<"$(readelf -d "$tmp/hello-static")" 'NEEDED.*libvgpu' &&
		{ echo "# hello-static needs libvgpu.so"; st=1; }
	"$tmp/hello-static" sim >"$tmp/hello.out" 2>&1 || st=1
	grep -q '^hello: PASS' "$tmp/hello.out" || st=1
	((st == 0)) || diag <"$tmp/hello.out"
fi
result example_static $st

st=0
printf '    S2R R0, SR_TID.X ;\n    LDP.64 R2, [0x0] ;\n    SHL R4, R0, 0x2 ;\n    IADD R2, R2, R4 ;\n    STG [R2], R0 ;\n    EXIT ;\n' >"$tmp/k.vgs"
out=$("$prefix/bin/vgpu-run" --backend sim --block 4 --buffer o:16 --dump o \
	"$tmp/k.vgs" 2>&1)
[[ $out == $'o:\n00000000 00000001 00000002 00000003' ]] ||
	{ diag <<<"vgpu-run: $out"; st=1; }
"$prefix/bin/vgpu-info" --backend sim 2>&1 >/dev/null | diag
((PIPESTATUS[0] == 0)) || { echo "# vgpu-info failed"; st=1; }
result tools_installed $st

st=0
cuda_so=$build/libcuda.so.1
soname=$(readelf -d "$cuda_so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname == libcuda.so.1 ]] || { echo "# libcuda SONAME '$soname'"; st=1; }
nm -D --defined-only "$cuda_so" | awk '{ print $3 }' | sort >"$tmp/cuda.exported"
others=$(grep -v '^cu' "$tmp/cuda.exported")
[[ -z $others ]] || { diag <<<"exported but not cu*: $others"; st=1; }
# each function of cuda.h, mapped through its #define to the versioned name
sed -n -e 's/^#define \(cu[A-Za-z0-9]*\) \(cu[A-Za-z0-9_]*\)$/s|^\1$|\2|/p' \
	-e 's/^#define \(cu[A-Za-z0-9]*\) __CUDA_API_PT[DS][SZ](\(cu[A-Za-z0-9_]*\))$/s|^\1$|\2|/p' \
	libvgpu/cuda/cuda.h >"$tmp/cuda.map"
awk '/^CUresult CUDAAPI cu/ { sub(/^CUresult CUDAAPI /, ""); sub(/\(.*/, ""); print }' \
	libvgpu/cuda/cuda.h | sed -f "$tmp/cuda.map" | sort >"$tmp/cuda.declared"
# and the per-thread-default-stream forms (CUDA_API_PER_THREAD_DEFAULT_STREAM)
sed -n -e 's/.*__CUDA_API_PTDS(\(cu[A-Za-z0-9_]*\))$/\1_ptds/p' \
	-e 's/.*__CUDA_API_PTSZ(\(cu[A-Za-z0-9_]*\))$/\1_ptsz/p' libvgpu/cuda/cuda.h >>"$tmp/cuda.declared"
sort -u -o "$tmp/cuda.declared" "$tmp/cuda.declared"
missing=$(comm -23 "$tmp/cuda.declared" "$tmp/cuda.exported")
[[ -z $missing ]] || { diag <<<"declared in cuda.h, not exported: $missing"; st=1; }
echo "# libcuda.so.1 exports $(wc -l <"$tmp/cuda.exported") entry points"
result cuda_library $st

st=0
{
	echo '#include <stddef.h>'
	echo '#include <stdio.h>'
	echo '#include <cuda.h>'
	echo '#define V(x) printf("%s %lld\n", #x, (long long)(x));'
	echo '#define L(t) printf("%s %zu %zu\n", #t, sizeof(t), _Alignof(t));'
	echo '#define O(t, f) printf("%s.%s %zu\n", #t, #f, offsetof(t, f));'
	echo 'int main(void) {'
	# every enumerator of our header's enums, and its CU_ constants
	awk '/^typedef enum/ { e = 1 }
		e && /^\t(CU|CUDA)_[A-Z0-9_]+/ { sub(/^\t/, ""); sub(/[ ,=].*/, ""); print "V(" $0 ")" }
		/^} / { e = 0 }' libvgpu/cuda/cuda.h libvgpu/cuda/cuda_types.h
	sed -n 's/^#define \(CU_[A-Z0-9_]*\) .*/V((long long)\1)/p' libvgpu/cuda/cuda.h \
		libvgpu/cuda/cuda_types.h |
		grep -v '_AS_INT)$'
	for t in CUuuid CUlaunchAttributeValue CUlaunchAttribute CUlaunchConfig CUtensorMap \
		CUDA_MEMCPY2D CUctxCreateParams CUdeviceptr CUdevice CUresult \
		CUmulticastObjectProp CUmemGenericAllocationHandle; do
		echo "L($t)"
	done
	for f in gridDimX gridDimY gridDimZ blockDimX blockDimY blockDimZ sharedMemBytes \
		hStream attrs numAttrs; do
		echo "O(CUlaunchConfig, $f)"
	done
	for f in id value value.clusterDim.x value.clusterDim.z value.priority value.cooperative \
		value.programmaticEvent.flags value.launchCompletionEvent.flags; do
		echo "O(CUlaunchAttribute, $f)"
	done
	for f in srcXInBytes srcY srcMemoryType srcHost srcDevice srcArray srcPitch \
		dstXInBytes dstY dstMemoryType dstHost dstDevice dstArray dstPitch WidthInBytes \
		Height; do
		echo "O(CUDA_MEMCPY2D, $f)"
	done
	for f in execAffinityParams numExecAffinityParams cigParams; do
		echo "O(CUctxCreateParams, $f)"
	done
	for f in numDevices size handleTypes flags; do
		echo "O(CUmulticastObjectProp, $f)"
	done
	echo 'return 0; }'
} >"$tmp/layout.c"
nvidia_include=${CUDA_INCLUDE:-/usr/local/cuda/include}
for h in ours nvidia; do
	inc=-Ilibvgpu/cuda
	[[ $h == nvidia ]] && inc="-isystem $nvidia_include"
	# shellcheck disable=SC2086
	out=$($CC -std=c11 -Wall -Werror $inc -o "$tmp/layout-$h" "$tmp/layout.c" 2>&1) ||
		{ diag <<<"$h: $out"; st=1; }
	[[ $st == 0 ]] && "$tmp/layout-$h" >"$tmp/layout-$h.txt"
done
if ((st == 0)); then
	out=$(diff "$tmp/layout-nvidia.txt" "$tmp/layout-ours.txt") || { diag <<<"$out"; st=1; }
	echo "# $(wc -l <"$tmp/layout-ours.txt") values, sizes and offsets compared with NVIDIA's cuda.h"
fi
result cuda_header_abi $st

st=0
cuda_cflags=$(pkg-config --cflags vgpu-cuda) || cuda_cflags=MISSING
cuda_libs=$(pkg-config --libs vgpu-cuda) || cuda_libs=MISSING
echo "# pkg-config --cflags --libs vgpu-cuda: $cuda_cflags $cuda_libs"
# shellcheck disable=SC2086
out=$($CC -std=c11 -Wall -Wextra -Werror $SAN_FLAGS $cuda_cflags -o "$tmp/drv_saxpy" \
	examples/cuda/drv_saxpy.c $cuda_libs -lm 2>&1) || { diag <<<"$out"; st=1; }
if ((st == 0)); then
	"$tmp/drv_saxpy" >"$tmp/drv.out" 2>&1 || st=1
	grep -q '^drv_saxpy: PASS' "$tmp/drv.out" || st=1
	((st == 0)) || diag <"$tmp/drv.out"
	grep -q <<<"$(ldd "$tmp/drv_saxpy")" "$prefix/lib/vgpu-cuda/libcuda.so.1" ||
		{ echo "# drv_saxpy did not load $prefix/lib/vgpu-cuda/libcuda.so.1"; st=1; }
	grep -q <<<"$(ldd "$tmp/drv_saxpy")" "$prefix/lib/vgpu-cuda/../libvgpu.so.2" ||
		{ echo "# the installed libcuda.so.1 did not load the installed libvgpu.so.2"; st=1; }
fi
result cuda_example $st

st=0
cudart_so=$build/libcudart.so.13
soname=$(readelf -d "$cudart_so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname == libcudart.so.13 ]] || { echo "# libcudart SONAME '$soname'"; st=1; }
nm -D --defined-only "$cudart_so" | awk '{ print $3 }' | sort >"$tmp/cudart.exported"
others=$(grep -Ev '^(cuda|__cuda)[A-Za-z0-9_]*@@libcudart\.so\.13$' "$tmp/cudart.exported" |
	grep -v '^libcudart\.so\.13$')
[[ -z $others ]] || { diag <<<"libcudart.so.13 exports more: $others"; st=1; }
for sym in __cudaRegisterFatBinary __cudaRegisterFatBinaryEnd __cudaRegisterFunction \
	__cudaRegisterVar __cudaUnregisterFatBinary __cudaPushCallConfiguration \
	__cudaPopCallConfiguration __cudaGetKernel __cudaLaunchKernel cudaLaunchKernel \
	cudaLaunchKernelExC cudaMalloc cudaMemcpy cudaGetDeviceProperties; do
	grep -qx "$sym@@libcudart.so.13" "$tmp/cudart.exported" ||
		{ echo "# libcudart.so.13 does not export $sym@@libcudart.so.13"; st=1; }
done
echo "# libcudart.so.13 exports $(wc -l <"$tmp/cudart.exported") entry points"
if [[ -x $build/tests/test_cudart ]]; then
	LD_LIBRARY_PATH=$prefix/lib/vgpu-cuda "$build/tests/test_cudart" >"$tmp/cudart.out" 2>&1 || st=1
	grep -q '^# Totals: pass:[1-9][0-9]* fail:0 ' "$tmp/cudart.out" || st=1
	((st == 0)) || diag <"$tmp/cudart.out"
	grep -q <<<"$(LD_LIBRARY_PATH=$prefix/lib/vgpu-cuda ldd "$build/tests/test_cudart")" \
		"$prefix/lib/vgpu-cuda/libcudart.so.13" ||
		{ echo "# test_cudart did not load $prefix/lib/vgpu-cuda/libcudart.so.13"; st=1; }
else
	echo "# $build/tests/test_cudart is not built"
	st=1
fi
result cudart $st

st=0
make -s -C "$top" BUILD="$build" CC="$CC" SAN="$SAN" PREFIX="$prefix" \
	uninstall >"$tmp/install.log" 2>&1 || { diag <"$tmp/install.log"; st=1; }
left=$(find "$prefix" -type f -o -type l)
[[ -z $left ]] || { diag <<<"left after uninstall: $left"; st=1; }
result uninstall $st

if ((n != ${#tests[@]})); then
	echo "# ran $n tests of ${#tests[@]}"
	fail=$((fail + 1))
fi
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
((fail == 0))
