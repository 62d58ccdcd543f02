#!/usr/bin/env python3
"""attn's generated kernels, called through their attn-compile library,
against PyTorch SDPA's flash (FlashAttention-2) and cuDNN backends in the
same run, on the shape grid of DESIGN.md:

    attn-compile bench/kernels.mlir --shared -o out/bench     # here
    python3 bench/compare.py out/bench/libkernels.so          # on the GPU

f16; CUDA events, median of 30 runs after 5 warm-ups, each after an L2
flush (bench/peers.py).
FLOPs 4 B Hq Sq Sk D (halved for causal); bytes K and V read once plus Q
and O. Each attn output is also compared with the flash backend's
(max relative difference), so a fast wrong kernel shows. Prints a
markdown table.
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "examples", "python"))
from attn_library import AttnLibrary  # noqa: E402
from peers import median_ms  # noqa: E402

# (label, kernel, B, Hq, Hkv, Sq, Sk, D, causal)
PREFILL = []
for d, h in [(128, 16), (64, 32)]:
    for causal in [False, True]:
        for s in [512, 1024, 2048, 4096, 8192, 16384]:
            kernel = f"prefill_h{h}_d{d}" + ("_causal" if causal else "")
            PREFILL.append((f"D{d} S{s} B{16384 // s}" +
                            (" causal" if causal else ""), kernel,
                            16384 // s, h, h, s, s, d, causal))
PREFILL.append(("B1 H8 S512 D64", "prefill_h8_d64", 1, 8, 8, 512, 512, 64,
                False))
# Grids smaller than the GPU at D128 (the runtime's small-grid tiles).
PREFILL += [("B1 H16 S512 D128" + (" causal" if causal else ""),
             "prefill_h16_d128" + ("_causal" if causal else ""), 1, 16, 16,
             512, 512, 128, causal) for causal in [False, True]]
DECODE = [(f"decode B{b} Sk{sk}", "decode_h32_kv8_d128", b, 32, 8, 1, sk, 128,
           False)
          for b, sk in [(1, 4096), (1, 16384), (1, 131072), (8, 16384),
                        (64, 4096)]]
PEERS = [("flash", SDPBackend.FLASH_ATTENTION),
         ("cudnn", SDPBackend.CUDNN_ATTENTION)]


def run_shape(lib, label, kernel, b, hq, hkv, sq, sk, d, causal):
    q = torch.randn(b, hq, sq, d, device="cuda", dtype=torch.float16)
    k = torch.randn(b, hkv, sk, d, device="cuda", dtype=torch.float16)
    v = torch.randn(b, hkv, sk, d, device="cuda", dtype=torch.float16)
    o = torch.full_like(q, float("nan"))
    call = lib.kernels[kernel].prepare(q=q, k=k, v=v, o=o)
    times = {"attn": median_ms(call)}
    outputs = {"attn": o}
    for name, backend in PEERS:
        try:
            with sdpa_kernel(backend):
                fn = lambda: F.scaled_dot_product_attention(
                    q, k, v, is_causal=causal, enable_gqa=hq != hkv)
                outputs[name] = fn()
                times[name] = median_ms(fn)
        except RuntimeError as e:
            times[name] = None
            print(f"# {label}: {name} unavailable: {str(e).splitlines()[0]}",
                  file=sys.stderr)
    diff = None
    if "flash" in outputs:
        ref = outputs["flash"].float()
        diff = float((o.float() - ref).abs().max() /
                     ref.abs().max().clamp_min(1e-6))
    flops = 4.0 * b * hq * sq * sk * d / (2 if causal else 1)
    nbytes = 2.0 * (2 * q.numel() + k.numel() + v.numel())
    return times, flops, nbytes, diff


def fmt(ms, flops, nbytes, decode):
    if ms is None:
        return "n/a"
    if decode:
        return f"{nbytes / (ms * 1e-3) / 1e12:.2f} TB/s ({ms * 1e3:.1f} us)"
    return f"{flops / (ms * 1e-3) / 1e12:.1f} TF/s ({ms * 1e3:.1f} us)"


def ratio(a, b):
    return f"{b / a:.2f}x" if a and b else "n/a"


def main():
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} path/to/libkernels.so", file=sys.stderr)
        return 2
    lib = AttnLibrary(sys.argv[1])
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"CUDA {torch.version.cuda}")
    print("| shape | attn | FA2 (flash) | cuDNN | attn/FA2 | attn/cuDNN | "
          "max diff vs FA2 |")
    print("|---|---|---|---|---|---|---|")
    worst = 0.0
    for shape in PREFILL + DECODE:
        decode = shape[1].startswith("decode")
        times, flops, nbytes, diff = run_shape(lib, *shape)
        worst = max(worst, diff or 0.0)
        print(f"| {shape[0]} | {fmt(times['attn'], flops, nbytes, decode)} | "
              f"{fmt(times['flash'], flops, nbytes, decode)} | "
              f"{fmt(times['cudnn'], flops, nbytes, decode)} | "
              f"{ratio(times['attn'], times['flash'])} | "
              f"{ratio(times['attn'], times['cudnn'])} | "
              f"{'n/a' if diff is None else f'{diff:.1e}'} |", flush=True)
        torch.cuda.empty_cache()
    # f16 outputs of two correct kernels differ by a few f16 ulps.
    if worst > 2e-2:
        print(f"FAIL: attn differs from FA2 by {worst:.1e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
