#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Install what a fresh Debian 12 machine needs to build and test vGPU on
# the host: gcc and make (build-essential), clang for the clang variant of
# `make check`, pkg-config and libdrm-dev for libvgpu's drm backend.  The ASan/UBSan variant builds with gcc, whose runtimes
# (libasan8, libubsan1) come with build-essential; clang's own sanitizer
# runtime (libclang-rt-14-dev) is therefore not needed.  clang-19 (bookworm
# has it; 14 is too old for sm_90a) compiles tests/ptx/*.cu to the PTX
# corpus the front end's tests run, and its clang++-19 builds the CUDA
# corpus again (test_corpus_NAME_clang, docs/ptx-corpus.md).  libjansson-dev: test_timeline parses
# the timelines' JSON with it.  python3 (its standard library only) runs
# tests/ptx/gen/ptxgen, which writes test_ptxgen's kernels at build time.  libzstd-dev:
# libcuda.so.1 reads the zstd-compressed PTX nvcc puts in fatbins.
#
# Idempotent: installs only what is missing, runs `apt-get update` only
# then, and takes a fraction of a second when everything is present.
set -euo pipefail

packages=(build-essential ccache clang clang-19 pkg-config libdrm-dev libjansson-dev libzstd-dev python3)
# `make fuzz` (scripts/install-deps.sh --fuzz): clang-19's libFuzzer and
# sanitizer runtimes, which nothing else needs
if [[ ${1-} == --fuzz ]]; then
	packages+=(libclang-rt-19-dev)
fi
exec "$(dirname "$0")/apt-install.sh" --tag install-deps "${packages[@]}"
