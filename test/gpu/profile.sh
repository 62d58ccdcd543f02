#!/usr/bin/env bash
# Runs on the GPU machine, from the bundle scripts/pack-gpu.sh makes:
# Nsight Compute on one attn prefill kernel and on FlashAttention-2 (PyTorch
# SDPA flash) for the same shape, so the two can be compared counter by
# counter. Prints a short summary; writes the full details and attn's SASS
# with per-instruction stall samples to $OUT.
#   bash profile.sh [BENCH_LINE_REGEX]   (default: the D128 S4096 line)
cd "$(dirname "$0")"
out="${OUT:-/tmp}"
pick="${1:-^bench_h16_d128 .* 4 4096 4096 }"
{ head -1 cases.txt; grep -E "$pick" bench.txt | head -1; } > profile-case.txt
read -r _ _ hq hkv d _ left right _ _ _ _ b sq sk _ <<< "$(tail -1 profile-case.txt)"
causal=False; [ "$left" = -1 ] && [ "$right" = 0 ] && causal=True
echo "profiling: $(tail -1 profile-case.txt | cut -d' ' -f1) B$b Hq$hq S$sq D$d causal=$causal"
metrics="--section SpeedOfLight --section Occupancy --section LaunchStats \
  --section WarpStateStats --section InstructionStats --section ComputeWorkloadAnalysis \
  --section MemoryWorkloadAnalysis_Tables --section SourceCounters"
timeout 200 ncu $metrics --launch-skip 3 --launch-count 1 --import-source no \
  -o "$out/attn" ./attn_gpu_test bench profile-case.txt . > "$out/ncu-attn.log" 2>&1
echo "ncu attn rc=$?"
cat > fa2_once.py <<EOF
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
q = torch.randn($b, $hq, $sq, $d, device="cuda", dtype=torch.float16)
k = torch.randn($b, $hkv, $sk, $d, device="cuda", dtype=torch.float16)
v = torch.randn($b, $hkv, $sk, $d, device="cuda", dtype=torch.float16)
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    for _ in range(5):
        F.scaled_dot_product_attention(q, k, v, is_causal=$causal)
torch.cuda.synchronize()
EOF
timeout 200 ncu $metrics --kernel-name regex:flash_fwd --launch-skip 3 --launch-count 1 \
  -o "$out/fa2" python3 fa2_once.py > "$out/ncu-fa2.log" 2>&1
echo "ncu fa2 rc=$?"
for who in attn fa2; do
  ncu --import "$out/$who.ncu-rep" --page details > "$out/$who-details.txt" 2>&1
  ncu --import "$out/$who.ncu-rep" --page source --print-source sass --csv \
    > "$out/$who-sass.csv" 2>&1
  echo "== $who"
  grep -E "^  [a-z]|Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc A|Warp Cycles Per Issued|Executed Instructions  |Shared.*Bank|Compute \(SM\) Thr|No Eligible|Block Limit Reg|Stall" \
    "$out/$who-details.txt" | grep -v "^  [a-z].*(" | head -40
done
