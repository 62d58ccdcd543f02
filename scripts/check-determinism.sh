#!/usr/bin/env bash
# Checks that the IR and PTX attn emits do not depend on the C++ compiler
# that built it: builds attn-opt and attn-translate with g++ and with
# clang++ (each in its own folder), snapshots the PTX and MSL of every GPU
# suite, benchmark and example spec on every NVIDIA target, with the IR
# right after the tier passes and after the CPU pipeline's attn-decompose
# (scripts/ptx-snapshot.sh, ATTN_SNAPSHOT_IR=1), and compares. C++ leaves
# the order of a call's arguments unspecified, so two builder calls feeding
# one expression create their ops in either order; canonicalization can
# hide that in the PTX but not in the IR.
#
#   scripts/check-determinism.sh [WORK_DIR]     (default /tmp/attn-determinism)
#
# Takes about an hour on 2 cores (two builds, two snapshots); not part of
# CI.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${1:-/tmp/attn-determinism}"
mkdir -p "$work"
command -v g++ > /dev/null || { echo "check-determinism: needs g++"; exit 2; }
for cxx in g++ clang++-22; do
  cc=gcc
  [ "$cxx" = clang++-22 ] && cc=clang-22
  build="$work/build-$cxx"
  if [ ! -f "$build/build.ninja" ]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" > "$work/cmake-$cxx.log"
  fi
  ninja -C "$build" -j "${ATTN_JOBS:-2}" attn-opt attn-translate > "$work/build-$cxx.log"
  ATTN_SNAPSHOT_IR=1 bash "$root/scripts/ptx-snapshot.sh" "$build" "$work/ptx-$cxx"
done
if diff -r "$work/ptx-g++" "$work/ptx-clang++-22" > "$work/diff.txt"; then
  echo "check-determinism: identical IR, PTX and MSL from the g++ and" \
       "clang++ builds ($(ls "$work/ptx-g++" | wc -l) files)"
else
  echo "check-determinism: the builds differ in" \
       "$(grep -c '^diff -r' "$work/diff.txt") files; see $work/diff.txt"
  exit 1
fi
