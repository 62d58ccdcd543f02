#!/usr/bin/env python3
"""attn's generated kernels, called through their attn-compile library,
against PyTorch SDPA's flash (FlashAttention-2) and cuDNN backends and
compiled FlexAttention (torch.compile(flex_attention), causal through a
block mask, GQA through enable_gqa) in the same run, on the shape grid of
DESIGN.md:

    attn-compile bench/kernels.mlir --shared -o out/bench     # here
    python3 bench/compare.py out/bench/libkernels.so [--json out.json]
    python3 bench/plot.py out.json -o bench/                  # PNG charts

f16; CUDA events, median of 30 runs after 5 warm-ups, each after an L2
flush (bench/peers.py).
FLOPs 4 B Hq Sq Sk D (halved for causal); bytes K and V read once plus Q
and O. Each attn output is also compared with the flash backend's
(max relative difference), so a fast wrong kernel shows; so is Flex's.
Prints a markdown table; --json also writes one record per shape and
implementation (bench/plot.py reads it). A peer that cannot run a shape
(Flex on some decode rows) shows n/a, with the reason on stderr and in
the record's "note".

With --append-library (attn-compile bench/append.mlir --shared), a second
table times attn.cache_append: a decode step of B 64 and prefill chunks
of 4k tokens, into contiguous and paged caches (8 K/V heads of 128, f16).
Bytes: the new K and V read once and written once. Peers: the copy
ceiling, a torch copy_ of the same bytes (half of them read, half
written), and the same append as PyTorch advanced-index assignment (what
an engine without a kernel does). attn's cache is checked against the new
tokens after the timing runs. (Written without a GPU at hand: untested
until a GPU run; see docs/Specs.md, "Appending to a K/V cache".)
"""
import argparse
import json
import os
import re
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

_here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _here)
# The attn package: python/ in the repository, or beside this file in a
# GPU bundle.
for _p in (os.path.join(_here, "..", "python"), os.path.join(_here, "python")):
    if os.path.isdir(os.path.join(_p, "attn")):
        sys.path.insert(0, os.path.abspath(_p))
        break
from attn.library import Library  # noqa: E402
from peers import median_ms  # noqa: E402

try:
    from torch.nn.attention.flex_attention import (create_block_mask,
                                                   flex_attention)
    import torch._dynamo
    # One compiled graph per shape: keep them all.
    torch._dynamo.config.cache_size_limit = 256
    _flex = torch.compile(flex_attention, dynamic=False)
except ImportError as e:  # PyTorch before 2.5
    _flex, _flex_missing = None, str(e)

# (label, kernel, B, Hq, Hkv, Sq, Sk, D, causal)
PREFILL = []
for d, h in [(128, 16), (64, 32)]:
    for causal in [False, True]:
        for s in [512, 1024, 2048, 4096, 8192, 16384]:
            kernel = f"prefill_h{h}_d{d}" + ("_causal" if causal else "")
            PREFILL.append((f"D{d} S{s} B{16384 // s}" +
                            (" causal" if causal else ""), kernel,
                            16384 // s, h, h, s, s, d, causal))
# D256 (issue 17's floor: at least FA2), hidden 2048 as 8 heads.
PREFILL += [(f"D256 S{s} B{16384 // s}" + (" causal" if causal else ""),
             "prefill_h8_d256" + ("_causal" if causal else ""), 16384 // s,
             8, 8, s, s, 256, causal)
            for causal in [False, True] for s in [1024, 4096, 16384]]
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
# Issue 18's other decode rows: MQA (Hq 64, Hkv 1) and speculative decode
# (Sq 4 under GQA-8, no mask: SDPA's is_causal would align top-left).
DECODE += [(f"decode MQA Hq64 B{b} Sk16384", "decode_h64_kv1_d128", b, 64, 1,
            1, 16384, 128, False) for b in (1, 8)]
DECODE += [(f"decode spec Sq4 GQA-8 B{b} Sk16384", "decode_spec4_h32_kv4_d128",
            b, 32, 4, 4, 16384, 128, False) for b in (1, 8)]
# Issue 18's paged decode rows: attn reads a block-size-16 cache through a
# shuffled block table; the peers run the contiguous decode on the same
# bytes (the same K/V values), so attn/cuDNN is paged attn against
# contiguous cuDNN.
DECODE += [(f"decode paged16 B{b} Sk{sk}", "decode_paged16_h32_kv8_d128", b,
            32, 8, 1, sk, 128, False)
           for b, sk in [(8, 4096), (8, 32768), (64, 4096), (64, 32768)]]
# (label, kernel, B, Hkv, S_new, kv_len, D, block_size): kv_len is the
# capacity, or the tokens a paged sequence's table names; every sequence
# starts at kv_len - S_new, so every new token is written.
APPEND = [("append decode B64", "append_decode", 64, 8, 1, 4096, 128, 0),
          ("append decode B64 paged", "append_decode_paged", 64, 8, 1, 4096,
           128, 16),
          ("append prefill 4k", "append_chunk", 1, 8, 4096, 8192, 128, 0),
          ("append prefill 4k B4", "append_chunk", 4, 8, 4096, 8192, 128, 0),
          ("append prefill 4k paged", "append_chunk_paged", 1, 8, 4096, 8192,
           128, 16)]
PEERS = [("flash", SDPBackend.FLASH_ATTENTION),
         ("cudnn", SDPBackend.CUDNN_ATTENTION)]


def _causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def run_flex(q, k, v, causal, hq, hkv):
    """(fn, None) running compiled Flex on these tensors, or (None, why)."""
    if _flex is None:
        return None, f"no flex_attention ({_flex_missing})"
    try:
        mask = (create_block_mask(_causal, None, None, q.shape[2], k.shape[2],
                                  device="cuda") if causal else None)
        kwargs = {"enable_gqa": True} if hq != hkv else {}
        fn = lambda: _flex(q, k, v, block_mask=mask, **kwargs)
        fn()
        return fn, None
    except Exception as e:  # a shape Flex does not take
        return None, f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"


def paged_cache(k, v, block_size):
    """The paged operands holding contiguous [B, Hkv, Sk, D] k and v: blocks
    of `block_size` keys in a shuffled order, the block table naming them
    and kv_lens = Sk."""
    b, hkv, sk, d = k.shape
    per_seq = sk // block_size
    order = torch.randperm(b * per_seq, device=k.device)
    table = torch.empty_like(order)
    table[order] = torch.arange(b * per_seq, device=k.device)

    def blocks(x):
        x = x.view(b, hkv, per_seq, block_size, d).permute(0, 2, 1, 3, 4)
        return x.reshape(b * per_seq, hkv, block_size, d)[order].contiguous()
    return {"k": blocks(k), "v": blocks(v),
            "block_table": table.view(b, per_seq).to(torch.int32),
            "kv_lens": torch.full((b,), sk, dtype=torch.int32,
                                  device=k.device)}


def run_shape(lib, label, kernel, b, hq, hkv, sq, sk, d, causal, flex=True):
    q = torch.randn(b, hq, sq, d, device="cuda", dtype=torch.float16)
    k = torch.randn(b, hkv, sk, d, device="cuda", dtype=torch.float16)
    v = torch.randn(b, hkv, sk, d, device="cuda", dtype=torch.float16)
    o = torch.full_like(q, float("nan"))
    if "paged" in kernel:
        call = lib.kernels[kernel].prepare(q=q, o=o, **paged_cache(k, v, 16))
    else:
        call = lib.kernels[kernel].prepare(q=q, k=k, v=v, o=o)
    times = {"attn": median_ms(call)}
    outputs = {"attn": o}
    notes = {}
    for name, backend in PEERS:
        try:
            with sdpa_kernel(backend):
                fn = lambda: F.scaled_dot_product_attention(
                    q, k, v, is_causal=causal, enable_gqa=hq != hkv)
                outputs[name] = fn()
                times[name] = median_ms(fn)
        except RuntimeError as e:
            times[name] = None
            notes[name] = str(e).splitlines()[0]
            print(f"# {label}: {name} unavailable: {notes[name]}",
                  file=sys.stderr)
    fn, why = (run_flex(q, k, v, causal, hq, hkv) if flex
               else (None, "not run (--no-flex)"))
    if fn is None:
        times["flex"] = None
        notes["flex"] = why
        print(f"# {label}: flex unavailable: {why}", file=sys.stderr)
    else:
        outputs["flex"] = fn()
        times["flex"] = median_ms(fn)
    diffs = {}
    if "flash" in outputs:
        ref = outputs["flash"].float()
        for name, out in outputs.items():
            diffs[name] = float((out.float() - ref).abs().max() /
                                ref.abs().max().clamp_min(1e-6))
    flops = 4.0 * b * hq * sq * sk * d / (2 if causal else 1)
    nbytes = 2.0 * (2 * q.numel() + k.numel() + v.numel())
    return times, flops, nbytes, diffs, notes


def run_append(lib, label, kernel, b, hkv, s_new, kv_len, d, block_size):
    """Times of attn's append, the copy ceiling and torch indexing; the
    bytes moved; and whether attn's cache holds the new tokens."""
    f16 = dict(device="cuda", dtype=torch.float16)
    k_new = torch.randn(b, hkv, s_new, d, **f16)
    v_new = torch.randn(b, hkv, s_new, d, **f16)
    start = kv_len - s_new
    lens = torch.full((b,), start, dtype=torch.int32, device="cuda")
    pos = torch.arange(start, kv_len, device="cuda")
    tensors = {"k_new": k_new, "v_new": v_new, "kv_lens": lens}
    if block_size:
        max_blocks = (kv_len + block_size - 1) // block_size
        num_blocks = b * max_blocks + 3
        table = torch.randperm(num_blocks, device="cuda")[:b * max_blocks]
        table = table.view(b, max_blocks).to(torch.int32)
        k_cache = torch.full((num_blocks, hkv, block_size, d), float("nan"),
                             **f16)
        tensors["block_table"] = table
        # Each new token's (block, row): the same slots the kernel writes.
        slot = table.long()[:, pos // block_size]          # [B, S_new]
        row = (pos % block_size).expand(b, s_new)

        def torch_append():
            k_cache[slot, :, row] = k_new.transpose(1, 2)
            v_cache[slot, :, row] = v_new.transpose(1, 2)

        def written():
            return k_cache[slot, :, row].transpose(1, 2)
    else:
        k_cache = torch.full((b, hkv, kv_len, d), float("nan"), **f16)

        def torch_append():
            k_cache[:, :, start:] = k_new
            v_cache[:, :, start:] = v_new

        def written():
            return k_cache[:, :, start:]
    v_cache = torch.full_like(k_cache, float("nan"))
    tensors.update(k_cache=k_cache, v_cache=v_cache)
    call = lib.kernels[kernel].prepare(**tensors)
    times = {"attn": median_ms(call)}
    torch.cuda.synchronize()
    ok = bool(torch.equal(written(), k_new))
    nbytes = 2.0 * 2 * k_new.numel() * k_new.element_size()
    src = torch.empty(int(nbytes // 2), dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    times["copy"] = median_ms(lambda: dst.copy_(src))
    times["torch"] = median_ms(torch_append)
    return times, nbytes, ok


def append_table(path, records):
    lib = Library(path)
    print()
    print("| append | attn | copy ceiling | torch indexing | attn/copy | "
          "attn/torch | cache right |")
    print("|---|---|---|---|---|---|---|")
    worst = 1.0
    for shape in APPEND:
        times, nbytes, ok = run_append(lib, *shape)
        worst = min(worst, times["copy"] / times["attn"])
        print(f"| {shape[0]} | {fmt(times['attn'], 0, nbytes, True)} | "
              f"{fmt(times['copy'], 0, nbytes, True)} | "
              f"{fmt(times['torch'], 0, nbytes, True)} | "
              f"{times['copy'] / times['attn']:.2f} | "
              f"{ratio(times['attn'], times['torch'])} | "
              f"{'yes' if ok else 'NO'} |", flush=True)
        label, kernel, b, hkv, s_new, kv_len, d, block_size = shape
        for impl, ms in times.items():
            records.append({
                "label": label, "kernel": kernel, "impl": impl,
                "kind": "append", "B": b, "Hkv": hkv, "S_new": s_new,
                "kv_len": kv_len, "D": d, "block_size": block_size, "ms": ms,
                "tbps": nbytes / (ms * 1e-3) / 1e12, "cache_right": ok})
        if not ok:
            print(f"FAIL: {label}: attn's cache does not hold the new tokens")
            return 1
        torch.cuda.empty_cache()
    print(f"# append: attn at {worst:.2f}x the copy ceiling at worst "
          "(target >= 0.90)")
    return 0


def fmt(ms, flops, nbytes, decode):
    if ms is None:
        return "n/a"
    if decode:
        return f"{nbytes / (ms * 1e-3) / 1e12:.2f} TB/s ({ms * 1e3:.1f} us)"
    return f"{flops / (ms * 1e-3) / 1e12:.1f} TF/s ({ms * 1e3:.1f} us)"


def ratio(a, b):
    return f"{b / a:.2f}x" if a and b else "n/a"


def main():
    parser = argparse.ArgumentParser(description="attn vs SDPA and Flex")
    parser.add_argument("library", help="path/to/libkernels.so")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--append-library",
                        help="path/to/libappend.so (bench/append.mlir): "
                             "also time attn.cache_append")
    parser.add_argument("--rows", choices=["all", "prefill", "decode"],
                        default="all",
                        help="which rows to run (default: all; a table "
                             "for bench/RESULTS.md runs all)")
    parser.add_argument("--only", metavar="REGEX",
                        help="only the rows whose label matches (a quick "
                             "look; tables for RESULTS.md run them all)")
    parser.add_argument("--no-flex", action="store_true",
                        help="leave compiled FlexAttention out (its "
                             "compiles take minutes)")
    args = parser.parse_args()
    torch.cuda.init()  # the library runs on PyTorch's CUDA context
    lib = Library(args.library)
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"CUDA {torch.version.cuda}")
    print("| shape | attn | FA2 (flash) | cuDNN | Flex (compiled) | "
          "attn/FA2 | attn/cuDNN | attn/Flex | max diff vs FA2 |")
    print("|---|---|---|---|---|---|---|---|---|")
    worst = 0.0
    records = []
    shapes = {"all": PREFILL + DECODE, "prefill": PREFILL,
              "decode": DECODE}[args.rows]
    if args.only:
        shapes = [s for s in shapes if re.search(args.only, s[0])]
    for shape in shapes:
        decode = shape[1].startswith("decode")
        times, flops, nbytes, diffs, notes = run_shape(
            lib, *shape, flex=not args.no_flex)
        diff = diffs.get("attn")
        worst = max(worst, diff or 0.0)
        print(f"| {shape[0]} | {fmt(times['attn'], flops, nbytes, decode)} | "
              f"{fmt(times['flash'], flops, nbytes, decode)} | "
              f"{fmt(times['cudnn'], flops, nbytes, decode)} | "
              f"{fmt(times['flex'], flops, nbytes, decode)} | "
              f"{ratio(times['attn'], times['flash'])} | "
              f"{ratio(times['attn'], times['cudnn'])} | "
              f"{ratio(times['attn'], times['flex'])} | "
              f"{'n/a' if diff is None else f'{diff:.1e}'} |", flush=True)
        label, kernel, b, hq, hkv, sq, sk, d, causal = shape
        for impl, ms in times.items():
            records.append({
                "label": label, "kernel": kernel, "impl": impl,
                "kind": "decode" if decode else "prefill", "B": b, "Hq": hq,
                "Hkv": hkv, "Sq": sq, "Sk": sk, "D": d, "causal": causal,
                "ms": ms,
                "tflops": flops / (ms * 1e-3) / 1e12 if ms else None,
                "tbps": nbytes / (ms * 1e-3) / 1e12 if ms else None,
                "max_rel_diff_vs_flash": diffs.get(impl),
                "note": notes.get(impl)})
        torch.cuda.empty_cache()
    append_failed = (append_table(args.append_library, records)
                     if args.append_library else 0)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(),
                       "torch": torch.__version__, "cuda": torch.version.cuda,
                       "records": records}, f, indent=1)
        print(f"# wrote {args.json}")
    # f16 outputs of two correct kernels differ by a few f16 ulps.
    if worst > 2e-2:
        print(f"FAIL: attn differs from FA2 by {worst:.1e}")
        return 1
    return append_failed


if __name__ == "__main__":
    sys.exit(main())
