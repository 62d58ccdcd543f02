#!/usr/bin/env bash
# Sets up, builds and runs attn's main job on the shipped examples: parse and
# verify every examples/*.mlir kernel spec and print it back.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" attn-opt
for spec in "$root"/examples/*.mlir; do
  echo "== $(basename "$spec")"
  "$build/bin/attn-opt" "$spec"
done
