#!/usr/bin/env python3
"""A/B of a block mask on the packed (varlen) form: the packed GQA-4
ALiBi + prefix-LM kernel of bench/mods.mlir built with its block mask
(LIB) and without one (BASE, a library built before packed batches got
block masks), on 8 sequences of 2048 tokens and 16 of random lengths;
the two outputs are compared with each other (the float64 checks are
mods_compare.py's).

    python3 bench/packed_block_mask_ab.py LIB BASE
"""
import os
import sys

import torch

_here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _here)
for _p in (os.path.join(_here, "..", "python"), os.path.join(_here, "python")):
    if os.path.isdir(os.path.join(_p, "attn")):
        sys.path.insert(0, os.path.abspath(_p))
        break
from attn.library import Library  # noqa: E402
from peers import median_ms  # noqa: E402


def main():
    new, old = Library(sys.argv[1]), Library(sys.argv[2])
    g = torch.Generator().manual_seed(0)
    print("| batch | with block mask | without | speed-up | outputs |")
    print("|---|---|---|---|---|")
    for lens in ([2048] * 8,
                 torch.randint(256, 4096, (16,), generator=g).tolist()):
        total = sum(lens)
        q = torch.randn(total, 16, 128, generator=g).half().cuda()
        k, v = (torch.randn(total, 4, 128, generator=g).half().cuda()
                for _ in range(2))
        cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)),
                          dtype=torch.int32).cuda()
        times, outs = [], []
        for lib in (new, old):
            o = torch.full_like(q, float("nan"))
            call = lib.kernels["packed_gqa_alibi_prefix"].prepare(
                q=q, k=k, v=v, cu_seqlens_q=cu, cu_seqlens_k=cu, o=o,
                sizes={"max_q_len": max(lens)})
            times.append(median_ms(call))
            outs.append(o)
        diff = float((outs[0].float() - outs[1].float()).abs().max())
        print(f"| {len(lens)} sequences, {total} tokens (max {max(lens)}) "
              f"| {times[0] * 1e3:.1f} us | {times[1] * 1e3:.1f} us "
              f"| {times[1] / times[0]:.2f}x | max abs diff {diff:.1e} |",
              flush=True)


if __name__ == "__main__":
    main()
