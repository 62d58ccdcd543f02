#!/usr/bin/env python3
"""Times decode kernels of an attn-compile library at fixed K/V split
counts (the C ABI's num_splits; 0 is libattnrt's own choice), against
SDPA's cuDNN backend on the same tensors, to check the runtime's split
policy (runtime/lib/attention_contract.c, attnrt_decode_split_count):

    python3 bench/split_sweep.py lib/libkernels.so

Each output is compared with SDPA's (max relative difference), so a fast
wrong count shows. f16; median of 30 runs after an L2 flush (peers.py).
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

_here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _here)
for _p in (os.path.join(_here, "..", "python"), os.path.join(_here, "python")):
    if os.path.isdir(os.path.join(_p, "attn")):
        sys.path.insert(0, os.path.abspath(_p))
        break
from attn.library import Library  # noqa: E402
from peers import median_ms  # noqa: E402

# (kernel, B, Hq, Hkv, Sq, Sk, D)
SHAPES = [("decode_h64_kv1_d128", b, 64, 1, 1, 16384, 128) for b in (1, 8)]
SHAPES += [("decode_spec4_h32_kv4_d128", b, 32, 4, 4, 16384, 128)
           for b in (1, 8)]
SHAPES += [("decode_h32_kv8_d128", b, 32, 8, 1, sk, 128)
           for b, sk in [(1, 16384), (1, 131072), (8, 16384)]]
SPLITS = [0, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library")
    args = parser.parse_args()
    lib = Library(args.library)
    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}")
    print("| shape | splits | attn | cuDNN | attn/cuDNN | max rel diff |")
    print("|---|---|---|---|---|---|")
    for kernel, b, hq, hkv, sq, sk, d in SHAPES:
        q = torch.randn(b, hq, sq, d, device="cuda", dtype=torch.float16)
        k = torch.randn(b, hkv, sk, d, device="cuda", dtype=torch.float16)
        v = torch.randn(b, hkv, sk, d, device="cuda", dtype=torch.float16)
        nbytes = 2.0 * (2 * q.numel() + k.numel() + v.numel())
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            fn = lambda: F.scaled_dot_product_attention(q, k, v,
                                                        enable_gqa=True)
            ref = fn().float()
            peer = median_ms(fn)
        label = f"{kernel} B{b} Sk{sk}"
        for splits in SPLITS:
            o = torch.full_like(q, float("nan"))
            call = lib.kernels[kernel].prepare(q=q, k=k, v=v, o=o,
                                               num_splits=splits)
            ms = median_ms(call)
            diff = float((o.float() - ref).abs().max() /
                         ref.abs().max().clamp_min(1e-6))
            print(f"| {label} | {splits or 'auto'} | "
                  f"{nbytes / ms / 1e9:.2f} TB/s ({ms * 1e3:.1f} us) | "
                  f"{nbytes / peer / 1e9:.2f} TB/s ({peer * 1e3:.1f} us) | "
                  f"{peer / ms:.2f}x | {diff:.1e} |", flush=True)


if __name__ == "__main__":
    main()
