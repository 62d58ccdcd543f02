#!/usr/bin/env bash
# Sets up, builds and runs attn's main job on the shipped examples: each
# examples/*.mlir kernel spec is verified, then compiled for the CPU with
# attn-to-cpu and run on random inputs against the float64 reference.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" attn-opt attn-run

# Sizes for each example's dynamic dims (B, Sq, Sk).
declare -A sizes=(
  [gemma2_softcap]="--batch=1 --q-len=100 --kv-len=100"
  [llama3_8b_prefill]="--batch=1 --q-len=200 --kv-len=256"
  [paged_decode]="--batch=4 --kv-len=1000 --num-splits=4"
  [sliding_window]="--batch=1 --q-len=64 --kv-len=300"
)
for spec in "$root"/examples/*.mlir; do
  name="$(basename "$spec" .mlir)"
  echo "== $name: verified spec"
  "$build/bin/attn-opt" "$spec"
  echo "== $name: on the CPU against the float64 reference"
  "$build/bin/attn-run" "$spec" ${sizes[$name]:---batch=1 --q-len=64 --kv-len=64}
done
