#!/usr/bin/env bash
# Sets up, builds and runs attn's main job on the shipped examples: each
# examples/*.mlir kernel spec is
#   1. verified and run on the CPU (attn-to-cpu) against the float64
#      reference: a PASS/FAIL line with the error (a FAIL fails the script);
#   2. packaged by attn-compile as a static library with a C ABI for
#      sm_80 and sm_90 (out/lib/lib<name>.a, <name>.h; cubins where ptxas
#      is installed, and PTX);
#   3. compiled to Metal Shading Language into out/<name>.metal.
# A target that refuses a spec says why (e.g. Metal takes no strided
# layouts). The C consumer (examples/c) is linked against
# the llama3 library. With an NVIDIA GPU present, the C consumer, the
# Python consumer and the GPU suite run too.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"
out="$root/out"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" attn-opt attn-run attn-translate attn-compile
mkdir -p "$out/lib"

# Sizes for each example's dynamic dims (B, Sq, Sk).
declare -A sizes=(
  [gemma2_softcap]="--batch=1 --q-len=100 --kv-len=100"
  [llama3_8b_prefill]="--batch=1 --q-len=200 --kv-len=256"
  [paged_decode]="--batch=4 --kv-len=1000 --num-splits=4"
  [paged_append]="--batch=4 --kv-len=1000"
  [fp8_paged_decode]="--batch=4 --kv-len=1000 --num-splits=4"
  [deepseek_v3_mla_decode]="--batch=4 --kv-len=1000 --num-splits=4"
  [deepseek_v3_prefill]="--batch=2 --q-len=100 --kv-len=150"
  [int8_prefill]="--batch=2 --q-len=100 --kv-len=150"
  [quantizing_append]="--batch=4 --kv-len=1000"
  [sliding_window]="--batch=1 --q-len=64 --kv-len=300"
  [varlen_prefill]="--batch=4 --q-len=100 --kv-len=150"
  [alibi]="--batch=2 --q-len=100 --kv-len=100"
  [document_mask]="--batch=2 --q-len=128 --kv-len=128"
  [prefix_lm]="--batch=3 --q-len=90 --kv-len=90 --capture-int-max=90"
  [t5_relative_bias]="--batch=1 --q-len=300 --kv-len=300"
  [softcap_region]="--batch=1 --q-len=100 --kv-len=140"
  [sliding_window_mask_mod]="--batch=1 --q-len=400 --kv-len=400"
)
for spec in "$root"/examples/*.mlir; do
  name="$(basename "$spec" .mlir)"
  echo "== $name"
  "$build/bin/attn-opt" "$spec" > /dev/null
  echo -n "cpu:   "
  "$build/bin/attn-run" "$spec" ${sizes[$name]:---batch=1 --q-len=64 --kv-len=64}
  echo -n "lib:   "
  # Every target, else the newest alone (gemma2's D=256 fits sm_90 only).
  if "$build/bin/attn-compile" "$spec" --targets=sm_80,sm_90 --shared \
       -o "$out/lib" 2> "$out/$name.lib.err"; then
    echo "out/lib/lib$name.a + $name.h (sm_80, sm_90)"
  elif "$build/bin/attn-compile" "$spec" --targets=sm_90 --shared \
         -o "$out/lib" 2> "$out/$name.lib.err"; then
    echo "out/lib/lib$name.a + $name.h (sm_90 only; sm_80: $(grep -m1 -o 'error: .*' "$out/$name.lib.err" || true))"
  else
    echo "not supported: $(grep -m1 -o 'error: .*' "$out/$name.lib.err")"
  fi
  echo -n "metal: "
  if "$build/bin/attn-translate" --attn-to-msl "$spec" -o "$out/$name.metal" \
       2> "$out/$name.metal.err"; then
    echo "out/$name.metal"
  else
    echo "not supported: $(grep -m1 -o 'error: .*' "$out/$name.metal.err")"
  fi
done

echo "== examples/c: linking the C consumer against out/lib/libllama3_8b_prefill.a"
clang-22 -std=c11 -O2 -I"$out/lib" "$root/examples/c/llama3_prefill.c" \
  "$out/lib/libllama3_8b_prefill.a" -ldl -lpthread -lm -o "$out/llama3_prefill"
echo "out/llama3_prefill"

if command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1; then
  echo "== NVIDIA GPU found: the consumers and the GPU suite"
  "$out/llama3_prefill"
  if python3 -c "import torch" 2> /dev/null; then
    python3 "$root/examples/python/check_kernels.py" "$out/lib"
  fi
  bash "$root/scripts/pack-gpu.sh"
  "$root/gpu-bundle/attn_gpu_test" check "$root/gpu-bundle/cases.txt" "$root/gpu-bundle"
fi
