#!/bin/bash
# old (684a079) and new (HEAD) alternating on the 16-core machine
d=$(cd "$(dirname "$0")" && pwd)
run() { local v=$1; shift; VGPU_CACHE_PATH=$d/cache-$v "$d/libs/ld-linux-x86-64.so.2" --library-path "$d/$v:$d/libs" "$d/$v/$@"; }
nproc; grep -m1 "model name" /proc/cpuinfo; grep -o -w sha_ni /proc/cpuinfo | head -1
for v in old new; do rm -rf $d/cache-$v; s=$EPOCHREALTIME; run $v test_corpus_cub_device > /dev/null 2>&1; echo "cub_device cold $v rc=$? $(awk "BEGIN{print $EPOCHREALTIME - $s}") s"; done
for r in 1 2 3 4 5; do for v in old new; do s=$EPOCHREALTIME; run $v test_corpus_cub_device > /dev/null 2>&1; echo "cub_device warm $v round $r rc=$? $(awk "BEGIN{print $EPOCHREALTIME - $s}") s"; done; done
for r in 4 5; do for v in old new; do echo "== bench_tma $v round $r"; run $v bench_tma 2>&1 | grep -v "^@"; done; done
