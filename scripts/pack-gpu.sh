#!/usr/bin/env bash
# Packs what a GPU machine needs to run attn's GPU suite (it has no LLVM):
# the suite's kernel specs compiled to PTX (for $ATTN_CHIP, default sm_90:
# the lent GPUs are H100s, and the default tiles depend on the target),
# the case and benchmark lists, the host test program (statically linked
# with libattnrt and the reference) and the peers' benchmark. Writes
# gpu-bundle/ (git-ignored);
# run there as
#   bash gpu-bundle/run-on-gpu.sh            # suite, sanitizers, benchmarks
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"
out="$root/gpu-bundle"
chip="${ATTN_CHIP:-sm_90}"
bash "$root/scripts/build.sh" attn-opt attnrt AttnReference attn-compile
# attn-translate is built too when its tree compiles (see below).
bash "$root/scripts/build.sh" attn-translate || echo "pack-gpu: using the attn-translate already built"
rm -rf "$out"
python3 "$root/test/gpu/make_cases.py" "$out"
for spec in "$out"/specs/*.mlir; do
  name="$(basename "$spec" .mlir)"
  "$build/bin/attn-opt" "$spec" --attn-to-ptx="chip=$chip" |
    "$build/bin/attn-translate" --attn-ptx -o "$out/$name.ptx"
done
# A few specs again on the wmma tier (the default on sm_80+ is mma), with
# their cases pointing at that PTX.
for name in mha_d64 gqa8_d128_causal_br gqa4_d128_softcap bf16_gqa4_d64_causal \
    vl_gqa4_d128_causal_br vl_paged16_gqa4_d128_causal_br; do
  "$build/bin/attn-opt" "$out/specs/$name.mlir" \
      --attn-to-ptx="chip=$chip prefill=wmma" |
    "$build/bin/attn-translate" --attn-ptx -o "$out/$name.wmma.ptx"
  grep "^$name $name.ptx " "$out/cases.txt" |
    sed "s/ $name.ptx / $name.wmma.ptx /" >> "$out/cases.txt"
done
# The decode specs again on the SIMT split kernel (the default on sm_80+
# is the tensor-core one; SIMT keeps f32 and sm_75 decode), as
# <name>.simt.ptx, where that kernel takes them (at most 8 rows).
for spec in "$out"/specs/*.mlir; do
  name="$(basename "$spec" .mlir)"
  grep -q "decode_split" "$out/$name.ptx" 2>/dev/null || continue
  "$build/bin/attn-opt" "$spec" \
      --attn-to-ptx="chip=$chip decode-tensor-cores=false" |
    "$build/bin/attn-translate" --attn-ptx -o "$out/$name.simt.ptx"
  if grep -q "mma.sync" "$out/$name.simt.ptx"; then
    rm -f "$out/$name.simt.ptx"
    continue
  fi
  { grep "^$name $name.ptx " "$out/cases.txt" || true; } |
    sed "s/ $name.ptx / $name.simt.ptx /" >> "$out/cases.txt"
done
# The wgmma tier (sm_90a) on every spec it takes: the same cases again,
# as <name>.wgmma.ptx (specs it refuses or sends to decode are skipped).
# Quantized caches decode with bit operations below sm_89 (cvt from fp8
# from it): the sm_80 code runs too (JIT-compiled for the GPU).
for spec in "$out"/specs/q8_*.mlir; do
  name="$(basename "$spec" .mlir)"
  "$build/bin/attn-opt" "$spec" --attn-to-ptx="chip=sm_80" 2>/dev/null |
    "$build/bin/attn-translate" --attn-ptx -o "$out/$name.sm80.ptx"
  grep "^$name $name.ptx " "$out/cases.txt" |
    sed "s/ $name.ptx / $name.sm80.ptx /" >> "$out/cases.txt"
done
for spec in "$out"/specs/*.mlir; do
  name="$(basename "$spec" .mlir)"
  "$build/bin/attn-opt" "$spec" --attn-to-ptx="chip=sm_90a prefill=wgmma" \
      2>/dev/null | "$build/bin/attn-translate" --attn-ptx \
      -o "$out/$name.wgmma.ptx" 2>/dev/null || true
  if grep -q wgmma.mma_async "$out/$name.wgmma.ptx" 2>/dev/null; then
    { grep "^$name $name.ptx " "$out/cases.txt" || true; } |
      sed "s/ $name.ptx / $name.wgmma.ptx /" >> "$out/cases.txt"
  else
    rm -f "$out/$name.wgmma.ptx"
  fi
done
# The specs the wgmma tier gives a producer warpgroup, again with one warp
# role (<name>.wgmma-1role.ptx, its default tiles): both stay checked,
# and the benchmarks run both (the A/B in RESULTS.md).
for spec in "$out"/specs/*.mlir; do
  name="$(basename "$spec" .mlir)"
  grep -q setmaxnreg "$out/$name.wgmma.ptx" 2>/dev/null || continue
  # ... without Q K^T a tile ahead under the producer, and with the
  # consumers' ping-pong (their A/Bs).
  # Each variant is a default schedule (attn-select-tier's
  # default-schedule): the ops' own schedules still win.
  for variant in "1role producer=off" "noahead qk_ahead=off" \
      "pingpong ping_pong=on"; do
    set -- $variant
    "$build/bin/attn-opt" "$spec" \
        --attn-to-ptx="chip=sm_90a prefill=wgmma default-schedule=#attn.schedule<$2>" |
      "$build/bin/attn-translate" --attn-ptx -o "$out/$name.wgmma-$1.ptx"
    for list in cases bench; do
      { grep "^$name $name.ptx " "$out/$list.txt" || true; } |
        sed "s/ $name.ptx / $name.wgmma-$1.ptx /" >> "$out/$list.txt"
    done
  done
done
# The main benchmark shapes on both tiers, one run (the A/B in RESULTS.md),
# and on the wgmma tier with cp.async copies instead of TMA (its A/B).
for name in bench_h16_d128 bench_h16_d128_causal bench_h16_d128_bf16 \
    bench_h32_d64 bench_h8_d64 bench_h8_d256 bench_h8_d256_causal; do
  grep "^$name $name.ptx " "$out/bench.txt" |
    sed "s/ $name.ptx / $name.wgmma.ptx /" >> "$out/bench.txt"
  "$build/bin/attn-opt" "$out/specs/$name.mlir" \
      --attn-to-ptx="chip=sm_90a prefill=wgmma default-schedule=#attn.schedule<kv_load=threads>" |
    "$build/bin/attn-translate" --attn-ptx -o "$out/$name.wgmma-cpasync.ptx"
  grep "^$name $name.ptx " "$out/bench.txt" |
    sed "s/ $name.ptx / $name.wgmma-cpasync.ptx /" >> "$out/bench.txt"
done
clang++-22 -O2 -std=c++17 -I"$root" -I"$root/runtime/include" \
  "$root/test/gpu/attn_gpu_test.cpp" "$root/lib/Reference/Reference.cpp" \
  "$build/lib/libattnrt.a" -ldl -lpthread -o "$out/attn_gpu_test"
cp "$root/test/gpu/run-on-gpu.sh" "$root/test/gpu/profile.sh" \
  "$root/test/gpu/profile-decode.sh" "$root/bench/peers.py" \
  "$root/bench/varlen_peers.py" "$out/"

# attn-compile's libraries and their consumers: the C example, the ABI
# checks, the Python wrapper with its checks, and the side-by-side benchmark.
compile="$build/bin/attn-compile"
"$compile" "$root/examples/llama3_8b_prefill.mlir" --shared -o "$out/lib"
"$compile" "$root/examples/paged_decode.mlir" --shared -o "$out/lib"
"$compile" "$root/examples/gemma2_softcap.mlir" --shared -o "$out/lib"
# sm_90a too: libattnrt runs its wgmma kernels on an H100.
"$compile" "$root/bench/kernels.mlir" --targets=sm_80,sm_90,sm_90a --shared \
  -o "$out/lib"
"$compile" "$root/bench/append.mlir" --shared -o "$out/lib"
# The mods library for the H100 alone: the bundle travels under 64 MiB.
"$compile" "$root/bench/mods.mlir" --targets=sm_90,sm_90a --shared -o "$out/lib"
# The examples with mod regions (bench/examples_check.py checks them).
for example in alibi document_mask prefix_lm sliding_window_mask_mod \
               softcap_region; do
  "$compile" "$root/examples/$example.mlir" --targets=sm_90,sm_90a --shared \
    -o "$out/lib"
done
"$compile" "$root/test/compile/Inputs/abi.mlir" -o "$out/lib"
cc="clang-22 -std=c11 -O2 -I$out/lib"
$cc "$root/examples/c/llama3_prefill.c" "$out/lib/libllama3_8b_prefill.a" \
  -ldl -lpthread -lm -o "$out/llama3_prefill"
$cc "$root/test/compile/abi_check.c" "$out/lib/libabi.a" -ldl -lpthread \
  -o "$out/abi_check"
"$compile" "$root/test/compile/Inputs/quantized-decode.mlir" -o "$out/lib" \
  2> /dev/null
$cc "$root/test/compile/quantized_check.c" "$out/lib/libquantized_decode.a" \
  -ldl -lpthread -lm -o "$out/quantized_check"
"$compile" "$root/test/compile/Inputs/mla.mlir" -o "$out/lib" 2> /dev/null
$cc -I"$root/test/compile" "$root/test/compile/mla_check.c" "$out/lib/libmla.a" \
  -ldl -lpthread -lm -o "$out/mla_check"
"$compile" "$root/bench/deepseek_v3.mlir" --targets=sm_90a --shared -o "$out/lib" \
  2> /dev/null
cp "$root/examples/python/attn_library.py" \
  "$root/examples/python/check_kernels.py" "$root/bench/compare.py" \
  "$root/bench/mods_compare.py" "$root/bench/examples_check.py" \
  "$root/bench/autotune.py" "$root/bench/split_sweep.py" \
  "$root/bench/packed_block_mask_ab.py" "$root/bench/mla_compare.py" "$out/"
# The Python package (python/attn) with its tests, and a cache holding
# every kernel the GPU tests compile: the GPU machine has no attn-compile.
mkdir -p "$out/python"
cp -r "$root/python/attn" "$root/python/tests" "$root/python/tools" "$out/python/"
find "$out/python" -name __pycache__ -prune -exec rm -rf {} +
mkdir -p "$out/examples"  # the spec files test_gpu.py compiles (cache hits)
cp "$root/examples/llama3_8b_prefill.mlir" "$root/examples/paged_decode.mlir" \
  "$root/examples/gemma2_softcap.mlir" "$out/examples/"
python3 "$root/python/tools/prefill_cache.py" "$out/attn-cache" \
  --compiler "$compile" > "$out/prefill-cache.log"
cp "$root/bench/plot.py" "$out/"
# The schedule candidates of the benchmark's prefill kernels.
python3 "$root/bench/autotune.py" build "$root/bench/kernels.mlir" "$out/tune" \
  --attn-compile "$compile" > /dev/null
# The GPU machine loads shared libraries: the static ones (linked into the
# consumers above) stay here, and the bundle travels closer to the device
# tool's 64 MiB carry limit.
find "$out/lib" "$out/attn-cache" -name '*.a' -delete
echo "packed $(ls "$out"/*.ptx | wc -l) PTX files into $out" \
  "($(du -sm "$out" | cut -f1) MiB; the device tool carries 64 MiB with the" \
  "tree: leave out tune/ when it does not fit)"
