#!/usr/bin/env python3
"""DeepSeek-V3's attention, attn against its peers in one run:

    attn-compile bench/deepseek_v3.mlir --shared -o out/ds  # here
    python3 bench/mla_compare.py out/ds/libdeepseek_v3.so

1. Absorbed MLA decode (16 query heads, bound by memory, and 128, bound by
   compute; one latent head of 576 values a token, V its first 512, pages
   of 64 rows, bf16) against
   - the read floor: torch.sum over the same latent bytes (a decode call
     cannot read them faster; bench/read_floor.py's measure), and
   - the same absorbed attention in PyTorch (bf16 matmuls, f32 softmax)
     over a contiguous latent cache [B, Sk, 576] (a paged gather would
     only add to it).
   Bytes: the latent cache read once (V is the same bytes) plus Q and O;
   FLOPs 2 B Hq Sq Sk (576 + 512).
2. The prefill before absorption (D192, Dv128, causal, bf16) against PyTorch SDPA's flash and
   cuDNN backends and compiled FlexAttention; FLOPs 2 B H S^2 (192 + 128)
   / 2.

CUDA events, median of 30 runs after 5 warm-ups, each after an L2 flush
(peers.median_ms). Each attn output is compared with float32 PyTorch (max
error relative to the largest element), so a fast wrong kernel shows.
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

SCALE = 0.1352  # 1/sqrt(192) times YaRN's mscale squared, as the specs
HQ, D, DV, PAGE = 16, 576, 512, 64  # HQ: the prefill's heads
# (Hq, B, Sk)
DECODE = [(16, 64, 4096), (16, 128, 4096), (16, 64, 16384), (16, 128, 32768),
          (128, 128, 4096), (128, 64, 16384)]
PREFILL = [(4, 4096), (2, 8192), (1, 16384)]  # (B, S), 16 heads
BF16 = dict(device="cuda", dtype=torch.bfloat16)


def rel_err(got, want):
    want = want.float()
    return float((got.float() - want).abs().max() / want.abs().max())


def torch_absorbed(q, latent):
    """q [B, Hq, 576], latent [B, Sk, 576] -> O [B, Hq, 512]."""
    s = torch.matmul(q, latent.transpose(1, 2)).float() * SCALE
    p = torch.softmax(s, dim=-1).to(q.dtype)
    return torch.matmul(p, latent[..., :DV])


def decode_rows(lib):
    print("| MLA decode (D 576/512, pages 64) | attn | TB/s | read "
          "floor | attn / floor | PyTorch absorbed | attn vs PyTorch | "
          "TFLOP/s | rel err |")
    print("|---|---|---|---|---|---|---|---|---|")
    for hq, b, sk in DECODE:
        kernel = lib.kernels[f"mla_decode_h{hq}"]
        q = torch.randn(b, hq, 1, D, **BF16)
        latent = torch.randn(b, sk, D, **BF16)
        per_seq = sk // PAGE
        order = torch.randperm(b * per_seq, device="cuda")
        pages = torch.empty_like(latent.view(b * per_seq, 1, PAGE, D))
        pages[order] = latent.view(b * per_seq, 1, PAGE, D)
        table = order.view(b, per_seq).to(torch.int32)
        lens = torch.full((b,), sk, dtype=torch.int32, device="cuda")
        o = torch.full((b, hq, 1, DV), float("nan"), **BF16)
        lse = torch.full((b, hq, 1), float("nan"), device="cuda")
        call = kernel.prepare(q=q, k=pages, block_table=table, kv_lens=lens,
                              o=o, lse=lse)
        t_attn = median_ms(call)
        t_floor = median_ms(lambda: latent.sum(dtype=torch.float32))
        q3 = q.view(b, hq, D)
        t_torch = median_ms(lambda: torch_absorbed(q3, latent))
        want = torch_absorbed(q3.float(), latent.float())
        err = rel_err(o.view(b, hq, DV), want)
        nbytes = 2.0 * (latent.numel() + q.numel() + o.numel())
        flops = 2.0 * b * hq * sk * (D + DV)
        print(f"| Hq{hq} B{b} Sk{sk} | {t_attn * 1e3:.1f} us | "
              f"{nbytes / t_attn / 1e9:.2f} | {t_floor * 1e3:.1f} us | "
              f"{t_floor / t_attn:.2f}x | {t_torch * 1e3:.1f} us | "
              f"{t_torch / t_attn:.2f}x | {flops / t_attn / 1e9:.1f} | "
              f"{err:.1e} |")
        del q, latent, pages, o


def prefill_rows(lib):
    kernel = lib.kernels["deepseek_v3_prefill"]
    try:
        from torch.nn.attention.flex_attention import (create_block_mask,
                                                       flex_attention)
        flex = torch.compile(flex_attention)
    except ImportError as e:
        flex, why = None, str(e)
    print("\n| DeepSeek-V3 prefill (H 16, D 192/128, causal) | attn TFLOP/s "
          "| flash | cuDNN | Flex | attn/cuDNN | attn/Flex | rel err |")
    print("|---|---|---|---|---|---|---|---|")
    for b, s in PREFILL:
        q = torch.randn(b, HQ, s, 192, **BF16)
        k = torch.randn(b, HQ, s, 192, **BF16)
        v = torch.randn(b, HQ, s, 128, **BF16)
        o = torch.full((b, HQ, s, 128), float("nan"), **BF16)
        lse = torch.full((b, HQ, s), float("nan"), device="cuda")
        call = kernel.prepare(q=q, k=k, v=v, o=o, lse=lse)
        flops = 2.0 * b * HQ * s * s * (192 + 128) / 2
        times = {"attn": median_ms(call)}
        ref = None
        for name, backend in (("flash", SDPBackend.FLASH_ATTENTION),
                              ("cudnn", SDPBackend.CUDNN_ATTENTION)):
            try:
                with sdpa_kernel(backend):
                    fn = lambda: F.scaled_dot_product_attention(
                        q, k, v, is_causal=True, scale=SCALE)
                    out = fn()
                    times[name] = median_ms(fn)
                    ref = out if ref is None else ref
            except RuntimeError as e:
                times[name] = None
                print(f"# B{b} S{s}: {name} unavailable: "
                      f"{str(e).splitlines()[0][:150]}", file=sys.stderr)
        if flex is not None:
            try:
                mask = create_block_mask(lambda b_, h, i, j: i >= j, None,
                                         None, s, s, device="cuda")
                fn = lambda: flex(q, k, v, block_mask=mask, scale=SCALE)
                out = fn()
                times["flex"] = median_ms(fn)
                ref = out if ref is None else ref
            except Exception as e:  # a shape Flex does not take
                times["flex"] = None
                print(f"# B{b} S{s}: flex unavailable: "
                      f"{str(e).splitlines()[0][:150]}", file=sys.stderr)
        else:
            times["flex"] = None
            print(f"# flex unavailable: {why}", file=sys.stderr)
        err = rel_err(o, ref) if ref is not None else float("nan")

        def tf(name):
            t = times.get(name)
            return f"{flops / t / 1e9:.0f}" if t else "n/a"

        def vs(name):
            t = times.get(name)
            return f"{t / times['attn']:.2f}x" if t else "n/a"
        print(f"| B{b} S{s} | {tf('attn')} | {tf('flash')} | {tf('cudnn')} "
              f"| {tf('flex')} | {vs('cudnn')} | {vs('flex')} | {err:.1e} |")
        del q, k, v, o


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("library", help="libdeepseek_v3.so from bench/deepseek_v3.mlir")
    args = ap.parse_args()
    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}")
    lib = Library(args.library)
    decode_rows(lib)
    prefill_rows(lib)


if __name__ == "__main__":
    main()
