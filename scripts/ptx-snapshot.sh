#!/usr/bin/env bash
# Writes the PTX (and MSL) attn emits for every kernel spec of the GPU suite, the
# benchmark and the examples, for each tier and chip that CI cannot run,
# into one folder, one file per (spec, target). Two snapshots compare with
# `diff -r`: a refactor that must not change the generated code, or two
# builds of attn (scripts/check-determinism.sh), must give none.
#
#   scripts/ptx-snapshot.sh BUILD_DIR OUT_DIR
#
# Kernel names and `//` comment lines (the launch facts attn-translate adds)
# are kept; pass the files through scripts/ptx-normalize.sed to compare
# code alone.
#
# ATTN_SNAPSHOT_IR=1 also writes the IR right after the NVIDIA tier passes
# (`$name.$target.l2.mlir`, the module after attn-to-decode) and after the
# CPU pipeline's attn-decompose (`$name.cpu.l1.mlir`): the IR, not only the
# PTX, must not depend on the C++ compiler (scripts/check-determinism.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "$1" && pwd)"
out="$2"
rm -rf "$out"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
specs="$(mktemp -d)"
trap 'rm -rf "$specs"' EXIT
python3 "$root/test/gpu/make_cases.py" "$specs" > /dev/null
cp "$root/bench/kernels.mlir" "$specs/specs/bench_kernels.mlir"
for f in "$root"/examples/*.mlir; do
  cp "$f" "$specs/specs/example_$(basename "$f")"
done

# target name: the attn-to-ptx options
targets=(
  "sm90:chip=sm_90"
  "sm90-wmma:chip=sm_90 prefill=wmma"
  "sm90-simt:chip=sm_90 decode-tensor-cores=false"
  "sm80:chip=sm_80"
  "sm75:chip=sm_75"
  "sm90a:chip=sm_90a"
  "sm90a-1role:chip=sm_90a default-schedule=#attn.schedule<producer=off>"
)
count=0
# Relative spec paths keep the temporary folder out of the diagnostics.
cd "$specs/specs"
for spec in *.mlir; do
  name="$(basename "$spec" .mlir)"
  for target in "${targets[@]}"; do
    tag="${target%%:*}"
    options="${target#*:}"
    # A target that refuses a spec (bf16 on sm_75, say) records the refusal.
    if [ "${ATTN_SNAPSHOT_IR:-0}" = 1 ]; then
      # The dump goes to stderr after any diagnostics of the passes before.
      if ! "$build/bin/attn-opt" "$spec" --attn-to-ptx="$options" \
             --mlir-print-ir-after=attn-to-decode 2> "$out/$name.$tag.l2.mlir" |
           "$build/bin/attn-translate" --attn-ptx -o "$out/$name.$tag.ptx" 2>> "$out/$name.$tag.err"; then
        rm -f "$out/$name.$tag.ptx"
      fi
      [ -s "$out/$name.$tag.l2.mlir" ] || rm -f "$out/$name.$tag.l2.mlir"
    elif ! "$build/bin/attn-opt" "$spec" --attn-to-ptx="$options" 2> "$out/$name.$tag.err" |
         "$build/bin/attn-translate" --attn-ptx -o "$out/$name.$tag.ptx" 2>> "$out/$name.$tag.err"; then
      rm -f "$out/$name.$tag.ptx"
    fi
    [ -s "$out/$name.$tag.err" ] || rm -f "$out/$name.$tag.err"
    count=$((count + 1))
  done
  if [ "${ATTN_SNAPSHOT_IR:-0}" = 1 ]; then
    "$build/bin/attn-opt" "$spec" --attn-to-cpu --mlir-print-ir-after=attn-decompose \
      2> "$out/$name.cpu.l1.mlir" > /dev/null || true
  fi
  # The Metal source too: the MSL emitter builds text, where argument
  # order matters the same way.
  "$build/bin/attn-translate" --attn-to-msl "$spec" -o "$out/$name.metal" \
    2> "$out/$name.metal.err" || rm -f "$out/$name.metal"
  [ -s "$out/$name.metal.err" ] || rm -f "$out/$name.metal.err"
done
echo "ptx-snapshot: $count (spec, target) pairs, $(ls "$out"/*.ptx | wc -l) PTX files in $out"
