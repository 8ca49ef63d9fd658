#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The cases of probe_column.cu (nvcc -arch=sm_90a -o p2 probe_column.cu -lcuda).
# The last nine were a second run, after the first had shown faults.
r(){ echo "$1"; shift; ./p2 "$@"; }
r "below lower W" 0 4 1 0 0 0 1 1 1 4 0 0 0 0 0 0 8
r "past upper H" 0 4 0 0 0 -1 1 1 1 4 0 0 2 0 0 0 8
r "c0=-1 4ch C=4" 0 4 0 0 0 0 1 1 1 4 -1 0 0 0 0 0 4
r "c0=2 4ch C=4" 0 4 0 0 0 0 1 1 1 4 2 0 0 0 0 0 4
r "c0=0 8ch C=4" 0 4 0 0 0 0 1 1 1 8 0 0 0 0 0 0 4
r "c0=4 4ch C=8" 0 8 0 0 0 0 1 1 1 4 4 0 0 0 0 0 4
r "c0=6 4ch C=8" 0 8 0 0 0 0 1 1 1 4 6 0 0 0 0 0 4
r "n=-1" 0 4 0 0 0 0 1 1 1 4 0 2 2 -1 0 0 4
r "n=2 past N" 0 4 0 0 0 0 1 1 1 4 0 2 2 2 0 0 6
r "N stride 3" 0 4 0 0 0 0 1 1 3 4 0 0 0 0 0 0 26
r "offset 255" 0 4 0 0 0 0 1 1 1 4 0 0 0 0 255 0 2
r "store plain" 1 4 0 0 0 0 1 1 1 4 0 0 0 0 0 0 4
r "store c0=2 2ch C=4" 1 4 0 0 0 0 1 1 1 2 2 0 0 0 0 0 4
r "store lower(1,0) upper(-1,0) w=1" 1 4 1 0 -1 0 1 1 1 4 0 1 0 0 0 0 6
r "store past N" 1 8 0 0 0 0 1 1 1 8 0 2 2 2 0 0 4
r "store c0=4 8ch C=8" 1 8 0 0 0 0 1 1 1 8 4 0 0 0 0 0 2
r "store W stride 2" 1 4 0 0 0 0 2 1 1 4 0 0 0 0 0 0 5
r "c0=-4 4ch C=4" 0 4 0 0 0 0 1 1 1 4 -4 0 0 0 0 0 4
r "c0=-4 8ch C=4" 0 4 0 0 0 0 1 1 1 8 -4 0 0 0 0 0 4
r "c0=4 4ch C=4" 0 4 0 0 0 0 1 1 1 4 4 0 0 0 0 0 4
r "c0=8 4ch C=4" 0 4 0 0 0 0 1 1 1 4 8 0 0 0 0 0 2
r "c0=4 8ch C=8 load" 0 8 0 0 0 0 1 1 1 8 4 0 0 0 0 0 2
r "store c0=2 4ch C=8" 1 8 0 0 0 0 1 1 1 4 2 0 0 0 0 0 2
r "store c0=8 4ch C=8" 1 8 0 0 0 0 1 1 1 4 8 0 0 0 0 0 2
r "c0=12 4ch C=16" 0 16 0 0 0 0 1 1 1 4 12 0 0 0 0 0 2
r "c0=12 8ch C=16" 0 16 0 0 0 0 1 1 1 8 12 0 0 0 0 0 2
