#!/bin/bash
# old (e046d3a) and new (HEAD) alternating on the 16-core machine
d=$(cd "$(dirname "$0")" && pwd)
run() { local v=$1; shift; "$d/libs/ld-linux-x86-64.so.2" --library-path "$d/$v:$d/libs" "$d/$v/$@"; }
nproc; grep -m1 "model name" /proc/cpuinfo
for r in 1 2 3 4 5 6; do for v in old new; do
  echo "== $r $v bench_libvgpu"; run $v bench_libvgpu a 2>&1 | grep -v "^@"
  echo "== $r $v bench_cuda"; run $v bench_cuda 2>&1 | grep -v "^@"
  echo "== $r $v bench_cudart"; run $v bench_cudart 2>&1 | grep -v "^@"
done; done
