#!/usr/bin/env bash
# Proves attn-compile's rule for leaving out sm_90a images
# (usesArchSpecificCode): for every kernel spec of the GPU suite, the
# benchmark and the examples, each (kernel, sm_90a) module that
# `--targets=sm_90,sm_90a` leaves out must have, when sm_90a is built
# alone, the PTX of its sm_90 module but for the `.target` line. Prints
# the counts and each module that differs; exits 1 if any does.
#
#   scripts/check-served-images.sh BUILD_DIR
#
# About 10 minutes on 2 cores (PTX only, no ptxas).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
compile="$(cd "$1" && pwd)/bin/attn-compile"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 "$root/test/gpu/make_cases.py" "$work/suite" > /dev/null
specs="$work/suite/specs"
cp "$root/bench/kernels.mlir" "$specs/bench_kernels.mlir"
for f in "$root"/examples/*.mlir; do cp "$f" "$specs/example_$(basename "$f")"; done
kept=0 omitted=0 differ=0 refused=0
for spec in "$specs"/*.mlir; do
  name="$(basename "$spec" .mlir)"
  both="$work/out/$name.both" alone="$work/out/$name.alone"
  # A spec attn-compile refuses (f32 or quantized prefill on NVIDIA) has
  # no images to compare.
  if ! "$compile" "$spec" --targets=sm_90,sm_90a --no-cubin --quiet \
         --keep-temps --name=k -o "$both" > /dev/null 2>&1 ||
     ! "$compile" "$spec" --targets=sm_90a --no-cubin --quiet \
         --keep-temps --name=k -o "$alone" > /dev/null 2>&1; then
    refused=$((refused + 1))
    continue
  fi
  for ptx in "$alone"/k.tmp/*.sm_90a.ptx; do
    module="$(basename "$ptx" .sm_90a.ptx)"
    if [ -f "$both/k.tmp/$module.sm_90a.ptx" ]; then
      kept=$((kept + 1))
      continue
    fi
    omitted=$((omitted + 1))
    if ! cmp -s <(grep -v '^\.target' "$ptx") \
                <(grep -v '^\.target' "$both/k.tmp/$module.sm_90.ptx"); then
      differ=$((differ + 1))
      echo "check-served-images: $name: $module's sm_90a code differs from its sm_90 code, yet was left out"
    fi
  done
done
echo "check-served-images: $kept sm_90a modules kept, $omitted left out" \
     "($differ of them differ from sm_90's); $refused specs refused"
[ "$differ" -eq 0 ]
