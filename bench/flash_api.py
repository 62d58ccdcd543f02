#!/usr/bin/env python3
"""attn.flash_attn's FlashAttention-compatible functions against attn.torch
on attn's own layout and against PyTorch SDPA's flash (FlashAttention-2)
and cuDNN backends, in one run: what the [B, S, H, D] views, the packed
form and the append in flash_attn_with_kvcache cost.

    # where attn-compile runs (PyTorch of any version):
    python3 bench/flash_api.py --fill-cache CACHE --targets sm_90a
    # on the GPU:
    ATTN_CACHE_DIR=CACHE ATTN_TARGETS=sm_90a python3 bench/flash_api.py

Per call: the median of --runs single calls between CUDA events, and of
--runs groups of --reps calls back to back (host work overlapped with
the GPU's), after --warmup; inputs random.
Prefill rows count FLOPs as 2·B·Hq·Sq·Sk·(D+Dv), halved for causal;
decode rows bytes as K and V read once plus Q and O (and the new token's
K/V for the append row). Each prefill row's output is compared with
SDPA flash's (rel_err printed).
"""
import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "python"),
                os.path.join(HERE, "..", "python", "tests")]

import torch  # noqa: E402

B, S, HQ, HKV, D = 2, 4096, 32, 8, 128       # prefill: Llama-3-8B, 4k
DB, DK, PAGE = 32, 4096, 256                  # decode: 32 sequences of 4k
DTYPE = torch.bfloat16


def rand(*shape, device, dtype=DTYPE):
    return torch.randn(*shape, device=device, dtype=dtype)


def calls(device):
    """name -> (function, flops, bytes): each row's call, built on
    `device` (on the CPU, only to record which kernels they ask for)."""
    from attn import flash_attn
    # attn.torch, through flash_attn's hook: fill_cache's recorder stands
    # in for it on the CPU.
    at = flash_attn._ops
    rows = {}
    q, k, v = (rand(B, S, HQ, D, device=device),
               rand(B, S, HKV, D, device=device),
               rand(B, S, HKV, D, device=device))
    flops = 2 * B * HQ * S * S * 2 * D / 2
    rows["prefill flash_attn_func [B,S,H,D]"] = (
        lambda: flash_attn.flash_attn_func(q, k, v, causal=True), flops, 0)
    qh, kh, vh = (t.transpose(1, 2).contiguous() for t in (q, k, v))
    rows["prefill attn.torch.attention [B,H,S,D]"] = (
        lambda: at().attention(qh, kh, vh, causal=True), flops, 0)
    qp, kp, vp = (t.reshape(-1, t.shape[2], D) for t in (q, k, v))
    cu = torch.arange(0, B * S + 1, S, dtype=torch.int32, device=device)
    rows["prefill flash_attn_varlen_func packed"] = (
        lambda: flash_attn.flash_attn_varlen_func(qp, kp, vp, cu, cu, S, S,
                                                  causal=True), flops, 0)
    # Decode: one query a sequence over a paged cache of DK keys.
    blocks = DB * DK // PAGE
    kc = rand(blocks + 1, PAGE, HKV, D, device=device)
    vc = rand(blocks + 1, PAGE, HKV, D, device=device)
    table = torch.arange(blocks, dtype=torch.int32, device=device).view(
        DB, DK // PAGE)
    qd = rand(DB, 1, HQ, D, device=device)
    kn, vn = rand(DB, 1, HKV, D, device=device), rand(DB, 1, HKV, D,
                                                      device=device)
    lens = torch.full((DB,), DK - 1, dtype=torch.int32, device=device)
    kv_bytes = 2 * DB * DK * HKV * D * 2 + 2 * DB * HQ * D * 2
    rows["decode flash_attn_with_kvcache paged, no append"] = (
        lambda: flash_attn.flash_attn_with_kvcache(
            qd, kc, vc, cache_seqlens=lens + 1, block_table=table,
            causal=True), 0, kv_bytes)
    rows["decode flash_attn_with_kvcache paged + append"] = (
        lambda: flash_attn.flash_attn_with_kvcache(
            qd, kc, vc, k=kn, v=vn, cache_seqlens=lens, block_table=table,
            causal=True), 0, kv_bytes + 2 * DB * HKV * D * 2)
    kca, vca = (t.transpose(1, 2).contiguous() for t in (kc, vc))
    rows["decode attn.torch.attention paged [blocks,H,page,D]"] = (
        lambda: at().attention(qd.transpose(1, 2), kca, vca,
                             block_table=table, kv_lens=lens + 1,
                             causal=True), 0, kv_bytes)
    return rows, dict(q=qh, k=kh, v=vh, qd=qd, kc=kc, vc=vc, table=table,
                      lens=lens + 1)


def fill_cache(cache_dir, targets, compiler):
    import gpu_cases
    facts = gpu_cases.recorded_facts(
        lambda: [fn() for fn, _, _ in calls("cpu")[0].values()])
    for f in dict.fromkeys(facts):
        f.compile(targets=targets, cache_dir=cache_dir, compiler=compiler)
        print(f, flush=True)


def timed(fn, warmup, runs, reps):
    """Seconds a call: (one call between two events, the median of `runs`;
    `reps` calls back to back between two events, per call, the median of
    `runs`). The first counts the host's work where the GPU waits for it;
    the second overlaps it with the GPU's, as a model's step does."""
    for _ in range(warmup):
        fn()
    single, batched = [], []
    for count, into in ((1, single), (reps, batched)):
        for _ in range(runs):
            start, end = (torch.cuda.Event(enable_timing=True)
                          for _ in range(2))
            start.record()
            for _ in range(count):
                fn()
            end.record()
            end.synchronize()
            into.append(start.elapsed_time(end) / 1e3 / count)
    return statistics.median(single), statistics.median(batched)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fill-cache")
    parser.add_argument("--targets", default="sm_90a")
    parser.add_argument("--compiler")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    if args.fill_cache:
        fill_cache(args.fill_cache, args.targets.split(","), args.compiler)
        return 0
    from torch.nn.attention import SDPBackend, sdpa_kernel
    F = torch.nn.functional
    rows, t = calls("cuda")
    g = HQ // HKV

    def sdpa(backend):
        kr = t["k"].repeat_interleave(g, 1)
        vr = t["v"].repeat_interleave(g, 1)
        with sdpa_kernel(backend):
            return lambda: F.scaled_dot_product_attention(
                t["q"], kr, vr, is_causal=True)
    flops = 2 * B * HQ * S * S * 2 * D / 2
    peers = {"prefill SDPA flash (FA2)": (sdpa(SDPBackend.FLASH_ATTENTION),
                                          flops, 0),
             "prefill SDPA cuDNN": (sdpa(SDPBackend.CUDNN_ATTENTION), flops,
                                    0)}
    reference = peers["prefill SDPA flash (FA2)"][0]().transpose(1, 2)
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}; "
          f"prefill B{B} S{S} Hq{HQ} Hkv{HKV} D{D} causal bf16; decode "
          f"B{DB} Sk{DK} pages of {PAGE}")
    print("| row | one call | TFLOP/s | TB/s | back to back | TFLOP/s | "
          "TB/s | rel_err vs SDPA |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (fn, fl, by) in list(rows.items()) + list(peers.items()):
        out = fn()
        err = ""
        if name.startswith("prefill") and "SDPA" not in name:
            o = out.view(B, S, HQ, D) if "packed" in name else (
                out.transpose(1, 2) if "[B,H,S,D]" in name else out)
            err = f"{float((o.float() - reference.float()).norm() / reference.float().norm()):.1e}"
        cells = []
        for seconds in timed(fn, args.warmup, args.runs, args.reps):
            cells.append(f"{seconds * 1e6:.1f} us | "
                         f"{fl / seconds / 1e12:.0f} | "
                         f"{by / seconds / 1e12:.2f}")
        print(f"| {name} | {' | '.join(cells)} | {err} |"
              .replace("| 0 |", "| |").replace("| 0.00 |", "| |"),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
