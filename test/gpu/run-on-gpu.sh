#!/usr/bin/env bash
# Runs on the GPU machine, from the bundle scripts/pack-gpu.sh makes: the
# suite, compute-sanitizer (memcheck on the small cases, racecheck on a
# few), the attn-compile consumers, attn's benchmark and the peers'
# (bench/peers.py, bench/compare.py) in the same run. --no-bench stops
# before the benchmarks, --bench-only runs only them. Logs go to $OUT (the
# device tool's folder) or /tmp.
cd "$(dirname "$0")"
out="${OUT:-/tmp}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ "${1:-}" != "--bench-only" ]; then
awk 'NR==1 || ($14<=257 && $15<=300)' cases.txt > sanitize.txt
awk 'NR==1 || $14==17 || $14==203 || ($15==239 && $18==3)' cases.txt > race.txt
timeout 300 ./attn_gpu_test check cases.txt . > "$out/check.log" 2> "$out/check.err"
echo "check rc=$?"; tail -1 "$out/check.log"; grep -v "^PASS" "$out/check.log" | head -20
timeout 300 compute-sanitizer --tool memcheck ./attn_gpu_test check sanitize.txt . > "$out/memcheck.log" 2>&1
echo "memcheck rc=$?"; tail -2 "$out/memcheck.log"
timeout 200 compute-sanitizer --tool racecheck ./attn_gpu_test check race.txt . > "$out/racecheck.log" 2>&1
echo "racecheck rc=$?"; tail -2 "$out/racecheck.log"
echo "== attn.cache_append kernels: every cache element, then memcheck on all cases"
timeout 120 ./attn_gpu_test append append_cases.txt . > "$out/append.log" 2> "$out/append.err"
echo "append rc=$?"; tail -1 "$out/append.log"; grep -v "^PASS" "$out/append.log" | head -20
timeout 300 compute-sanitizer --tool memcheck ./attn_gpu_test append append_cases.txt . > "$out/append-memcheck.log" 2>&1
echo "append memcheck rc=$?"; tail -2 "$out/append-memcheck.log"
echo "== attn-compile libraries: C consumer, ABI checks, Python consumer"
timeout 60 ./llama3_prefill; echo "llama3_prefill rc=$?"
# q_len 1: the library's split-K decode code, with the workspace it asks for.
timeout 60 ./llama3_prefill 2 1 3000; echo "llama3_prefill q_len 1 rc=$?"
timeout 60 ./abi_check gpu > "$out/abi.log" 2>&1; echo "abi_check rc=$?"
tail -1 "$out/abi.log"; grep FAIL "$out/abi.log" | head
# A quantized cache's scales through the C ABI, against float64.
timeout 60 ./quantized_check gpu; echo "quantized_check rc=$?"
# MLA's latent cache (V its first 512 columns) through the C ABI.
timeout 60 ./mla_check gpu; echo "mla_check rc=$?"
timeout 120 python3 check_kernels.py lib; echo "check_kernels rc=$?"
echo "== score_mod / mask_mod kernels (bench/mods.mlir) against a float64 reference"
PYTHONUNBUFFERED=1 timeout 200 python3 mods_compare.py lib/libmods.so --check-only
echo "mods check rc=$?"
echo "== the examples with mod regions, as attn-compile packages them"
PYTHONUNBUFFERED=1 timeout 120 python3 examples_check.py lib
echo "examples check rc=$?"
echo "== python/attn GPU tests: kernels, attn.torch, a layer under torch.compile"
# Kernels come from the cache pack-gpu.sh filled; pytest where installed.
runner="python3 python/tests/run_gpu_tests.py"
python3 -c "import pytest" 2>/dev/null &&
  runner="python3 -m pytest -q -p no:cacheprovider python/tests/test_gpu.py"
ATTN_CACHE_DIR="$PWD/attn-cache" PYTHONPATH="$PWD/python" PYTHONUNBUFFERED=1 \
  timeout 240 $runner > "$out/python-gpu.log" 2>&1
echo "python gpu tests rc=$?"; grep -E "PASS|FAIL|passed|failed|Error" "$out/python-gpu.log" | tail -25
[ "${1:-}" = "--no-bench" ] && exit 0
fi
timeout 120 ./attn_gpu_test append-bench append_bench.txt . > "$out/append-bench.log" 2>/dev/null
echo "append bench rc=$?"; grep -oE "^(PASS|FAIL) [^:]*:|median=.*" "$out/append-bench.log" | paste - - | cut -c1-200
timeout 150 ./attn_gpu_test bench bench.txt . > "$out/bench.log" 2>/dev/null
echo "bench rc=$?"; grep -oE "^(TIMED|PASS|FAIL) [^:]*:|median=.*" "$out/bench.log" | paste - - | cut -c1-150
PYTHONUNBUFFERED=1 timeout 120 python3 peers.py > "$out/peers.log" 2>&1
echo "peers rc=$?"; cat "$out/peers.log"
PYTHONUNBUFFERED=1 timeout 300 python3 compare.py lib/libkernels.so \
  --append-library lib/libappend.so \
  --json "$out/compare.json" > "$out/compare.log" 2>&1
echo "compare rc=$?"; cat "$out/compare.log"
PYTHONUNBUFFERED=1 timeout 200 python3 -W ignore mla_compare.py lib/libdeepseek_v3.so \
  > "$out/mla.log" 2>&1
echo "mla compare rc=$?"; cat "$out/mla.log"
python3 -c "import matplotlib" 2>/dev/null &&
  python3 plot.py "$out/compare.json" -o "$out" && echo "plots in $out"
for shape in "4 4096" "32 512"; do
  set -- $shape
  PYTHONUNBUFFERED=1 timeout 120 python3 autotune.py run tune/libvariants.so \
    --size batch=$1 --size q_len=$2 --size kv_len=$2 > "$out/tune-$2.log" 2>&1
  echo "autotune B=$1 S=$2 rc=$?"; grep winner "$out/tune-$2.log"
done
