#!/usr/bin/env bash
# Configures (once) and builds attn in build/ with Ninja against libMLIR.so.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"

if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
fi
# Two cores and 24 GiB: two jobs keep memory well inside the limit.
ninja -C "$build" -j "${ATTN_JOBS:-2}" "$@"
