#!/usr/bin/env bash
# Compiles an MSL kernel file and a C++ host program that runs it on the CPU
# through metal_emulator.h.
#
#   msl-emu-cc.sh KERNEL.metal HOST.cpp -o EXE [more clang++ arguments]
#
# The host includes the kernel with `#include ATTN_MSL_KERNEL_SOURCE`. The
# kernel file is copied next to EXE with one rewrite, [[threadgroup(n)]] ->
# [[ATTN_MSL_THREADGROUP_PARAM(n)]] (the `threadgroup` address-space macro
# cannot also be the attribute), and a #line so diagnostics and emulator
# errors name the original file. Threadgroup arrays declared inside a kernel
# body would silently be per-thread in C++, so they are refused here, and
# msl-check.py refuses what MSL forbids but C++ allows.
# CXX overrides the compiler (default clang++-22).
#
# ATTN_MSL_MATH=fast compiles the kernel as Metal does by default (fast math):
# the kernel file's own arithmetic under clang's fast-math flags (no NaNs or
# infinities assumed, so comparisons with them may fold away; reassociation,
# contraction), any use of an infinity or NaN in it an error
# (-Werror=nan-infinity-disabled), and plain tanh as Metal's fast tanh
# (ATTN_MSL_FAST_MATH). The host program and the emulator stay IEEE.
# ATTN_MSL_MATH=ieee (the default) compiles everything IEEE.
#
# ATTN_MSL_CHECKS=1 (the default) type-checks the kernel with MSL's address
# spaces as distinct types, then builds it with its loads and stores
# instrumented for the emulator's bounds checks and threadgroup race
# detector (README "Checks"). ATTN_MSL_CHECKS=0 builds once, typed, with
# neither.
set -euo pipefail

usage() {
  echo "usage: $0 KERNEL.metal HOST.cpp -o EXE [clang++ arguments]" >&2
  exit 2
}
[[ $# -ge 4 && $3 == -o ]] || usage
kernel=$1 host=$2 exe=$4
shift 4
runtime_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cxx=${CXX:-clang++-22}

# What MSL forbids and clang would accept: goto, virtual, exceptions,
# lambdas, new/delete, double, pointers without an address space,
# recursion (msl-check.py says how it finds them).
python3 "$runtime_dir/msl-check.py" "$kernel"

# `threadgroup T name[...]` at the start of a statement: an in-body array.
if in_body=$(grep -nE '^[[:space:]]*threadgroup[[:space:]]+[A-Za-z_][A-Za-z0-9_:<>, ]*[[:space:]]+[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\[' "$kernel"); then
  while IFS= read -r hit; do
    echo "$kernel:${hit%%:*}: error: threadgroup arrays declared in a kernel body are not supported by the emulator; declare a [[threadgroup(n)]] kernel parameter instead" >&2
  done <<<"$in_body"
  exit 1
fi

math=${ATTN_MSL_MATH:-ieee}
math_flags=()
case $math in
ieee) ;;
fast) math_flags=(-DATTN_MSL_FAST_MATH=1 -Werror=nan-infinity-disabled) ;;
*)
  echo "$0: ATTN_MSL_MATH must be ieee or fast, got '$math'" >&2
  exit 2
  ;;
esac

# Checked loads and stores (README "Checks"): the kernel file, and only it,
# gets clang's ThreadSanitizer instrumentation, whose callbacks the emulator
# defines (no TSan runtime is linked). The instrumentation skips accesses
# outside the default address space, so the kernel is type-checked with
# MSL's address spaces as distinct types first (-fsyntax-only), then built
# with them erased. ATTN_MSL_CHECKS=0 builds once, typed, unchecked.
checks=${ATTN_MSL_CHECKS:-1}
check_flags=()
case $checks in
1)
  check_flags=(-DATTN_MSL_ERASE_ADDRESS_SPACES=1
    -DATTN_MSL_CHECKED_ACCESSES=1 -fsanitize=thread
    -fno-sanitize-link-runtime
    "-fsanitize-ignorelist=$runtime_dir/msl-emu-instrument.txt"
    -mllvm -tsan-instrument-func-entry-exit=false
    -mllvm -tsan-instrument-atomics=false
    -mllvm -tsan-instrument-read-before-write=true)
  ;;
0) ;;
*)
  echo "$0: ATTN_MSL_CHECKS must be 1 or 0, got '${ATTN_MSL_CHECKS}'" >&2
  exit 2
  ;;
esac

mkdir -p "$(dirname "$exe")"
rewritten="$exe.kernel.inc"
{
  if [[ $math == fast ]]; then
    # The emulator first, so that only the kernel is compiled with fast math.
    printf '#include "metal_emulator.h"\n'
    printf '#pragma float_control(precise, off, push)\n'
  fi
  printf '#line 1 "%s"\n' "$kernel"
  sed -E 's/\[\[[[:space:]]*threadgroup[[:space:]]*\(/[[ATTN_MSL_THREADGROUP_PARAM(/g' "$kernel"
  [[ $math == fast ]] && printf '\n#pragma float_control(pop)\n'
  true
} >"$rewritten"

# Per-operation rounding for half and bfloat, as on the GPU (clang would
# otherwise keep intermediates in float).
common=(-std=c++17 -pthread -Wall -Wno-unknown-attributes
  -Xclang -ffloat16-excess-precision=none
  -Xclang -fbfloat16-excess-precision=none
  -I"$runtime_dir/include" -I"$runtime_dir"
  -DATTN_MSL_KERNEL_SOURCE="\"$(realpath "$rewritten")\""
  ${math_flags[@]+"${math_flags[@]}"})
if [[ $checks == 1 ]]; then
  # The host alone (not the extra sources in "$@") is enough: it names every
  # kernel, which instantiates the parameters' checks.
  extra=()
  for arg in "$@"; do
    [[ $arg == *.cpp || $arg == *.cc || $arg == *.o || $arg == -[Ll]* ||
      $arg == -Wl,* ]] || extra+=("$arg")
  done
  "$cxx" -fsyntax-only "${common[@]}" "$host" ${extra[@]+"${extra[@]}"}
fi
exec "$cxx" -O1 -g "${common[@]}" ${check_flags[@]+"${check_flags[@]}"} \
  "$host" -o "$exe" "$@"
