#!/usr/bin/env bash
# Configures (once) and builds attn in build/ with Ninja against libMLIR.so.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"

if [ ! -f "$build/build.ninja" ]; then
  # ccache, where installed, lets several checkouts share object files.
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 "${launcher[@]}"
fi
# Two cores and 24 GiB: two jobs keep memory well inside the limit.
ninja -C "$build" -j "${ATTN_JOBS:-2}" "$@"
