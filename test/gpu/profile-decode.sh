#!/usr/bin/env bash
# Runs on the GPU machine, from the bundle scripts/pack-gpu.sh makes: Nsight
# Compute's speed-of-light, occupancy and launch sections on the decode
# tier's split kernels at the bench/compare.py decode shapes, to record what
# limits each (achieved DRAM bandwidth, waves, occupancy) in
# bench/RESULTS.md. Writes the details to $OUT; prints a summary.
cd "$(dirname "$0")"
out="${OUT:-/tmp}"
s=$(python3 -c "print(128 ** -0.5)")
# spec ptx hq hkv d dv left right br scale softcap lse B Sq Sk bs lens splits
# dtype; splits as libattnrt picks them on an H100 (132 SMs) for the
# tensor-core split kernel (one block an SM at GQA-4 D128: 16 at B1).
cat > profile-decode.txt <<CASES
$(head -1 cases.txt)
bench_dec_h32_kv8_d128 bench_dec_h32_kv8_d128.ptx 32 8 128 128 -1 -1 0 $s 0 0 1 1 131072 0 0 16 f16
bench_dec_h32_kv8_d128 bench_dec_h32_kv8_d128.ptx 32 8 128 128 -1 -1 0 $s 0 0 1 1 16384 0 0 16 f16
bench_dec_h32_kv8_d128 bench_dec_h32_kv8_d128.ptx 32 8 128 128 -1 -1 0 $s 0 0 64 1 4096 0 0 1 f16
dec_mqa64_d128 dec_mqa64_d128.ptx 64 1 128 128 -1 -1 0 $s 0 1 8 1 16384 0 0 16 f16
dec_mqa64_d128 dec_mqa64_d128.ptx 64 1 128 128 -1 -1 0 $s 0 1 1 1 16384 0 0 16 f16
CASES
n=$(($(wc -l < profile-decode.txt) - 1))
timeout 300 ncu --section SpeedOfLight --section Occupancy --section LaunchStats \
  --kernel-name regex:_split --launch-count "$n" \
  ./attn_gpu_test check profile-decode.txt . > "$out/ncu-decode.log" 2>&1
echo "ncu decode rc=$?"
grep -E "^  [a-z_0-9]+_split|DRAM Throughput|Memory Throughput|Duration|Achieved Occupancy|Theoretical Occupancy|Waves Per SM|Grid Size|Registers Per|Block Limit (Registers|Shared)" \
  "$out/ncu-decode.log" | sed 's/  */ /g'
