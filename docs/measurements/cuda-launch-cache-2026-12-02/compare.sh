#!/bin/bash
d=$(cd "$(dirname "$0")" && pwd)
grep -m1 "model name" /proc/cpuinfo
for pad in 0 64 256 320 736 1056 1440 1856; do
  p=$(head -c $pad /dev/zero | tr '\0' x)
  for r in 1 2 3; do for v in old new; do
    echo "$pad $r $v $(PAD=$p taskset -c 5 "$d/libs/ld-linux-x86-64.so.2" --library-path "$d/$v:$d/libs" "$d/$v/bench_cuda" 2>/dev/null | grep '^empty' | awk '{print $3, $6, $9}')"
  done; done
done
for r in 1 2 3; do taskset -c 5 "$d/libs/ld-linux-x86-64.so.2" --library-path "$d/new:$d/libs" "$d/new/bench_cudart" 2>/dev/null | grep -v "^@"; done
