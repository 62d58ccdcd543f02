#!/usr/bin/env python3
"""The examples with score_mod / mask_mod regions (examples/*.mlir), as
attn-compile packages them, run on the GPU and checked against a float64
reference that applies the same modifications in PyTorch (a NaN-poisoned O
checked for unwritten elements). t5_relative_bias is f32, which the GPU
tiers refuse: CPU only.

    attn-compile examples/alibi.mlir --shared -o out/lib   (and the others)
    python3 bench/examples_check.py out/lib
"""

import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import Library  # noqa: E402
from mods_compare import document_ids, reference  # noqa: E402


def causal(b, h, i, j):
    return i >= j


def run(lib_dir, name, hq, hkv, d, dtype, b, sq, sk, score_mod, mask_mod,
        caps, scale=None):
    lib = Library(os.path.join(lib_dir, f"lib{name}.so"))
    g = torch.Generator(device="cuda").manual_seed(b * 101 + sq + sk)
    q = torch.randn(b, hq, sq, d, device="cuda", dtype=dtype, generator=g)
    k, v = (torch.randn(b, hkv, sk, d, device="cuda", dtype=dtype,
                        generator=g) for _ in range(2))
    o = torch.full_like(q, float("nan"))
    lib.kernels[name](q=q, k=k, v=v, o=o, **caps)
    torch.cuda.synchronize()
    unwritten = int(torch.isnan(o).sum())
    kx, vx = (t.repeat_interleave(hq // hkv, 1) for t in (k, v))
    ref = reference(q, kx, vx, score_mod, mask_mod, scale)
    err = float((o.double() - ref).abs().max() / ref.abs().max())
    ok = unwritten == 0 and err < (2e-2 if dtype == torch.bfloat16 else 5e-3)
    print(f"{'PASS' if ok else 'FAIL'} example {name} B={b} Sq={sq} Sk={sk}: "
          f"rel_err={err:.2e} unwritten={unwritten}", flush=True)
    return ok


def main():
    lib_dir = sys.argv[1] if len(sys.argv) > 1 else "lib"
    torch.cuda.init()
    failed = 0
    for b, sq, sk in ((2, 700, 700), (1, 1, 500)):
        g = torch.Generator().manual_seed(sq)
        n = max(sq, sk)
        # alibi: slopes [16] (a capture), under the causal mask.
        slopes = torch.exp2(-8.0 * (torch.arange(16.0) + 1) / 16).cuda()

        def alibi(s, bi, hi, i, j):
            return s + slopes.double()[hi] * (j - i).double()
        failed += not run(lib_dir, "alibi", 16, 16, 64, torch.float16, b, sq,
                          sk, alibi, causal, {"capture0": slopes})
        # document_mask: ids [B, S] and the causal mask.
        ids = document_ids(b, n, g)

        def docs(bi, hi, i, j):
            return (ids[bi, i] == ids[bi, j]) & (i >= j)
        failed += not run(lib_dir, "document_mask", 8, 8, 64, torch.float16,
                          b, sq, sk, None, docs, {"capture0": ids})
        # prefix_lm: a prefix length per sequence [B].
        prefix = torch.randint(0, n, (b,), generator=g,
                               dtype=torch.int32).cuda()

        def prefix_lm(bi, hi, i, j):
            return (j < prefix.long()[bi]) | (j <= i)
        failed += not run(lib_dir, "prefix_lm", 8, 8, 64, torch.float16, b,
                          sq, sk, None, prefix_lm, {"capture0": prefix})

        def window(bi, hi, i, j):
            return (j <= i) & (i - j <= 256)
        failed += not run(lib_dir, "sliding_window_mask_mod", 8, 2, 64,
                          torch.bfloat16, b, sq, sk, None, window, {})

        def softcap(s, bi, hi, i, j):
            return 50.0 * torch.tanh(s / 50.0)
        failed += not run(lib_dir, "softcap_region", 8, 4, 128,
                          torch.float16, b, sq, sk, softcap, causal, {},
                          scale=0.0625)
    print("all passed" if not failed else f"{failed} checks FAILED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
