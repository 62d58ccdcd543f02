#!/usr/bin/env bash
# Sets up, builds and runs attn's main job on the shipped examples: each
# examples/*.mlir kernel spec is
#   1. verified and run on the CPU (attn-to-cpu) against the float64
#      reference: a PASS/FAIL line with the error (a FAIL fails the script);
#   2. compiled to PTX for an H100 (attn-to-ptx, chip sm_90) into
#      out/<name>.ptx and checked with ptxas where CUDA is installed;
#   3. compiled to Metal Shading Language into out/<name>.metal.
# A target that refuses a spec says why (e.g. bf16 prefill needs the mma
# tier, not written yet). With an NVIDIA GPU present, the GPU suite runs too.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"
out="$root/out"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" attn-opt attn-run attn-translate
mkdir -p "$out"
ptxas="$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)"

# Sizes for each example's dynamic dims (B, Sq, Sk).
declare -A sizes=(
  [gemma2_softcap]="--batch=1 --q-len=100 --kv-len=100"
  [llama3_8b_prefill]="--batch=1 --q-len=200 --kv-len=256"
  [paged_decode]="--batch=4 --kv-len=1000 --num-splits=4"
  [sliding_window]="--batch=1 --q-len=64 --kv-len=300"
)
for spec in "$root"/examples/*.mlir; do
  name="$(basename "$spec" .mlir)"
  echo "== $name"
  "$build/bin/attn-opt" "$spec" > /dev/null
  echo -n "cpu:   "
  "$build/bin/attn-run" "$spec" ${sizes[$name]:---batch=1 --q-len=64 --kv-len=64}
  echo -n "ptx:   "
  if "$build/bin/attn-opt" "$spec" --attn-to-ptx=chip=sm_90 -o "$out/$name.mlir" \
       2> "$out/$name.ptx.err" &&
     "$build/bin/attn-translate" --attn-ptx "$out/$name.mlir" -o "$out/$name.ptx"; then
    kernels="$(grep -c '^// attn.kernel' "$out/$name.ptx")"
    if [ -x "$ptxas" ] && "$ptxas" -arch=sm_90 "$out/$name.ptx" -o "$out/$name.cubin"; then
      echo "out/$name.ptx ($kernels kernels, ptxas sm_90 ok)"
    else
      echo "out/$name.ptx ($kernels kernels, not assembled: no ptxas)"
    fi
  else
    echo "not supported: $(grep -m1 -o 'error: .*' "$out/$name.ptx.err")"
  fi
  echo -n "metal: "
  if "$build/bin/attn-translate" --attn-to-msl "$spec" -o "$out/$name.metal" \
       2> "$out/$name.metal.err"; then
    echo "out/$name.metal"
  else
    echo "not supported: $(grep -m1 -o 'error: .*' "$out/$name.metal.err")"
  fi
done

if command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1; then
  echo "== NVIDIA GPU found: the GPU suite"
  bash "$root/scripts/pack-gpu.sh"
  "$root/gpu-bundle/attn_gpu_test" check "$root/gpu-bundle/cases.txt" "$root/gpu-bundle"
fi
