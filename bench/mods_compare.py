#!/usr/bin/env python3
"""score_mod / mask_mod regions on the GPU (bench/mods.mlir): each kernel
checked against a float64 reference that applies the same modification in
PyTorch, then timed against compiled FlexAttention with the same
score_mod / mask_mod (and a block mask for the masks), and against attn's
built-in attribute where one says the same thing.

    attn-compile bench/mods.mlir --shared -o out/mods
    python3 bench/mods_compare.py out/mods/libmods.so [--check-only]

f16, 16 heads of 128, scale 1/sqrt(128); timing as bench/peers.py
(median of 30 runs after 5 warm-ups, each after an L2 flush). FLOPs
4 B H S^2 D, halved for causal-like masks (a figure for comparison only:
the window and document masks do less work than that).
"""

import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# compare.py finds the attn package and compiles Flex the same way.
from compare import Library, _flex, create_block_mask, median_ms  # noqa: E402

H, D = 16, 128
WINDOW, DOC = 1024, 1024


def softcap(s, b, h, i, j):
    return 30.0 * torch.tanh(s / 30.0)


def alibi(s, b, h, i, j):
    slope = torch.exp2(-0.5 * (h + 1).to(s.dtype))
    return s + slope * (j - i).to(s.dtype)


def causal(b, h, i, j):
    return i >= j


def window(b, h, i, j):
    return (i >= j) & (i - j < WINDOW)


def documents(b, h, i, j):
    return (i // DOC) == (j // DOC)


# The capture kernels' data, made per call by make_captures(b, s): ALiBi
# slopes (FlexAttention's own set, 2^(-8 (h + 1) / H)), document ids of 8
# unequal documents, a T5-style [128, H] bias table.
def alibi_slopes_of(h):
    return torch.exp2(-8.0 * (torch.arange(h, dtype=torch.float32) + 1) / h)


def document_ids(b, s, g):
    """[b, s] int32 ids of 8 documents of random lengths per sequence."""
    ids = torch.zeros(b, s, dtype=torch.int32)
    for row in range(b):
        cuts = torch.sort(torch.randperm(max(s - 1, 1), generator=g)[:7] +
                          1).values
        for c in cuts.tolist():
            ids[row, c:] += 1
    return ids.cuda()


def make_captures(kernel, b, s, g):
    """({capture name: CUDA tensor}, score_mod, mask_mod) of capture kernel
    `kernel` for batch b and length s (the mods read the same tensors)."""
    if kernel == "alibi_slopes":
        slopes = alibi_slopes_of(H).cuda()

        def score(sc, bi, hi, i, j):
            return sc + slopes.to(sc.dtype)[hi] * (j - i).to(sc.dtype)
        return {"capture0": slopes}, score, causal
    if kernel in ("documents_ids", "documents_ids_wmma",
                  "gqa_heads_documents"):
        ids = document_ids(b, s, g)

        def mask(bi, hi, i, j):
            same = ids[bi, i] == ids[bi, j]
            if kernel != "gqa_heads_documents":
                return same
            return torch.where(hi % 2 == 0, i >= j, same)
        return {"capture0": ids}, None, mask
    table = torch.randn(128, H, generator=g).cuda()

    def score(sc, bi, hi, i, j):
        return sc + table.to(sc.dtype)[(j - i + 64).clamp(0, 127), hi]
    return {"capture0": table}, score, causal


CAPTURE_CASES = ["alibi_slopes", "documents_ids", "t5_table"]
# The kernels whose mask_mod goes through a block mask (timed as _run, which
# computes it, and reusing one computed before, as Flex's block mask is).
BLOCK_MASKED = {"documents_mask_mod", "documents_ids"}


# (kernel, score_mod, mask_mod, built-in twin or None, causal-like)
CASES = [("softcap_region", softcap, causal, "softcap_builtin", True),
         ("alibi_region", alibi, causal, None, True),
         ("window_mask_mod", None, window, "window_builtin", True),
         ("window_causal_builtin_mask_mod", None, window, "window_builtin",
          True),
         ("documents_mask_mod", None, documents, None, False)]


def reference(q, k, v, score_mod, mask_mod, scale=None):
    """float64 attention with the modifications (scale: 1/sqrt(D) unless
    given); O = 0 where a row sees no key (attn's rule)."""
    qd, kd, vd = q.double(), k.double(), v.double()
    if scale is None:
        scale = 1 / math.sqrt(q.shape[-1])
    s = qd @ kd.transpose(-1, -2) * scale
    b, h, sq, sk = s.shape
    bi = torch.arange(b, device=q.device).view(b, 1, 1, 1)
    hi = torch.arange(h, device=q.device).view(1, h, 1, 1)
    ii = torch.arange(sq, device=q.device).view(1, 1, sq, 1)
    jj = torch.arange(sk, device=q.device).view(1, 1, 1, sk)
    if score_mod is not None:
        s = score_mod(s, bi, hi, ii, jj)
    seen = mask_mod(bi, hi, ii, jj).expand_as(s)
    s = s.masked_fill(~seen, float("-inf"))
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)
    return p @ vd


def check(lib, kernel, score_mod, mask_mod, b, sq, sk, captures=None,
          hkv=H):
    g = torch.Generator(device="cuda").manual_seed(b * 7919 + sq * 31 + sk)
    q = torch.randn(b, H, sq, D, device="cuda", dtype=torch.float16,
                    generator=g)
    k, v = (torch.randn(b, hkv, sk, D, device="cuda", dtype=torch.float16,
                        generator=g) for _ in range(2))
    o = torch.full_like(q, float("nan"))
    kern = lib.kernels[kernel]
    kern(q=q, k=k, v=v, o=o, **(captures or {}))
    torch.cuda.synchronize()
    unwritten = int(torch.isnan(o).sum())
    kx, vx = (t.repeat_interleave(H // hkv, 1) for t in (k, v))
    ref = reference(q, kx, vx, score_mod, mask_mod)
    if kern.has_block_mask and sq > 16:
        # The block mask computed once, then reused: the same result.
        mask = kern.block_mask(q=q, k=k, v=v, o=o, **(captures or {}))
        o2 = torch.full_like(q, float("nan"))
        kern.prepare(q=q, k=k, v=v, o=o2, block_mask=mask,
                     **(captures or {}))()
        torch.cuda.synchronize()
        unwritten += int(torch.isnan(o2).sum())
        if not torch.equal(o, o2):
            unwritten += 1
            print(f"FAIL {kernel}: reusing the block mask changed O")
        # A workspace of garbage in place of a block mask (a caller's
        # broken promise): O is unspecified, but the kernel must stay in
        # bounds and finish (compute-sanitizer memcheck runs this too).
        junk = torch.randint(-2**31, 2**31 - 1, (mask.numel() // 4,),
                             dtype=torch.int32,
                             generator=torch.Generator().manual_seed(sq))
        mask.view(torch.int32).copy_(junk)
        kern.prepare(q=q, k=k, v=v, o=o2, block_mask=mask,
                     **(captures or {}))()
        torch.cuda.synchronize()
    err = float((o.double() - ref).abs().max() / ref.abs().max())
    ok = unwritten == 0 and err < 5e-3
    print(f"{'PASS' if ok else 'FAIL'} {kernel} B={b} Sq={sq} Sk={sk}: "
          f"rel_err={err:.2e} unwritten={unwritten}", flush=True)
    return ok


def prefix_lm(b, h, i, j):
    return (j < 64) | (j <= i)


def check_packed(lib, kernel, lens):
    """The packed GQA-4 kernel (16 query heads over 4 K/V heads) over
    sequences of `lens` tokens (q_len = kv_len), each against the
    reference run alone: positions are per sequence."""
    g = torch.Generator(device="cuda").manual_seed(sum(lens))
    total = sum(lens)
    q = torch.randn(total, 16, D, device="cuda", dtype=torch.float16,
                    generator=g)
    k, v = (torch.randn(total, 4, D, device="cuda", dtype=torch.float16,
                        generator=g) for _ in range(2))
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)),
                      dtype=torch.int32, device="cuda")
    o = torch.full_like(q, float("nan"))
    lib.kernels[kernel](q=q, k=k, v=v, cu_seqlens_q=cu, cu_seqlens_k=cu, o=o,
                        sizes={"max_q_len": max(lens)})
    torch.cuda.synchronize()
    unwritten = int(torch.isnan(o).sum())
    worst = 0.0
    for s0, n in zip(cu.tolist(), lens):
        qs = q[s0:s0 + n].transpose(0, 1).unsqueeze(0)
        ks = k[s0:s0 + n].transpose(0, 1).repeat_interleave(4, 0).unsqueeze(0)
        vs = v[s0:s0 + n].transpose(0, 1).repeat_interleave(4, 0).unsqueeze(0)
        ref = reference(qs, ks, vs, alibi, prefix_lm)[0].transpose(0, 1)
        got = o[s0:s0 + n].double()
        worst = max(worst, float((got - ref).abs().max() / ref.abs().max()))
    ok = unwritten == 0 and worst < 5e-3
    print(f"{'PASS' if ok else 'FAIL'} {kernel} lens={lens}: "
          f"rel_err={worst:.2e} unwritten={unwritten}", flush=True)
    return ok


def paged_cache(k, v, g, block=16):
    """k, v [B, H, S, D] as a paged cache of `block`-key blocks in a
    shuffled order (three blocks nobody uses) and its block table."""
    b, h, s, d = k.shape
    per = (s + block - 1) // block
    order = torch.randperm(b * per + 3, generator=g)
    caches = []
    for x in (k, v):
        cache = torch.randn(b * per + 3, h, block, d, device="cuda",
                            dtype=x.dtype)
        for bi in range(b):
            for blk in range(per):
                rows = x[bi, :, blk * block:(blk + 1) * block]
                cache[order[bi * per + blk], :, :rows.shape[1]] = rows
        caches.append(cache)
    table = order[:b * per].view(b, per).to(torch.int32).cuda()
    return caches[0], caches[1], table


def check_lens(lib, kernel, b, sq, sk, paged):
    """A padded Q (GQA-4, causal, document ids) over K/V of per-sequence
    lengths (kv_lens: the first sequence 1 key, the last sk, the others
    drawn), contiguous or through a block table: the block mask has a row
    per batch."""
    g = torch.Generator().manual_seed(b * 17 + sq + sk)
    q = torch.randn(b, H, sq, D, generator=g).half().cuda()
    k, v = (torch.randn(b, 4, sk, D, generator=g).half().cuda()
            for _ in range(2))
    lens = torch.randint(1, sk + 1, (b,), generator=g, dtype=torch.int32)
    lens[0], lens[-1] = 1, sk
    lens = lens.cuda()
    ids = document_ids(b, max(sq, sk), g)
    o = torch.full_like(q, float("nan"))
    kern = lib.kernels[kernel]
    if paged:
        kc, vc, table = paged_cache(k, v, g)
        operands = dict(k=kc, v=vc, block_table=table)
    else:
        operands = dict(k=k, v=v)
    kern(q=q, o=o, kv_lens=lens, capture0=ids, **operands)
    torch.cuda.synchronize()
    unwritten = int(torch.isnan(o).sum())

    def mask(bi, hi, i, j):
        return (ids[bi, i] == ids[bi, j]) & (j <= i) & (j < lens[bi])
    kx, vx = (t.repeat_interleave(H // 4, 1) for t in (k, v))
    ref = reference(q, kx, vx, None, mask)
    err = float((o.double() - ref).abs().max() / ref.abs().max())
    ok = unwritten == 0 and err < 5e-3 and kern.has_block_mask
    print(f"{'PASS' if ok else 'FAIL'} {kernel} B={b} Sq={sq} Sk={sk} "
          f"kv_lens={lens.tolist()}: rel_err={err:.2e} "
          f"unwritten={unwritten} block_mask={kern.has_block_mask}",
          flush=True)
    return ok


def attn_times(kern, tensors):
    """(attention ms, ms of _run computing the block mask too or None):
    a kernel with a block mask is timed reusing one computed before, as
    Flex's block mask is made before its timing."""
    if not kern.has_block_mask:
        return median_ms(kern.prepare(**tensors)), None
    mask = kern.block_mask(**tensors)
    return (median_ms(kern.prepare(block_mask=mask, **tensors)),
            median_ms(kern.prepare(**tensors)))


def flex_fn(q, k, v, score_mod, mask_mod):
    if _flex is None:
        raise RuntimeError("no flex_attention in this PyTorch")
    mask = create_block_mask(mask_mod, None, None, q.shape[2], k.shape[2],
                             device="cuda")
    return lambda: _flex(q, k, v, score_mod=score_mod, block_mask=mask)


def time_row(lib, kernel, label, b, s, caps, score_mod, mask_mod, twin,
             half):
    """One table row: `kernel` (with captures `caps`), its built-in `twin`
    if any, and Flex with the same mods, on B x H x S x D."""
    q, k, v = (torch.randn(b, H, s, D, device="cuda", dtype=torch.float16)
               for _ in range(3))
    o = torch.empty_like(q)
    flops = 4.0 * b * H * s * s * D / (2 if half else 1)

    def fmt(ms):
        return (f"{flops / (ms * 1e-3) / 1e12:.1f} TF/s "
                f"({ms * 1e3:.1f} us)") if ms else "n/a"
    attn_ms, run_ms = attn_times(lib.kernels[kernel],
                                 dict(q=q, k=k, v=v, o=o, **caps))
    twin_ms = (median_ms(lib.kernels[twin].prepare(q=q, k=k, v=v, o=o))
               if twin else None)
    fn = flex_fn(q, k, v, score_mod, mask_mod)
    fn()
    flex_ms = median_ms(fn)
    speed = f"{twin_ms / attn_ms:.2f}x" if twin_ms else "n/a"
    print(f"| {label} | {b} x {s} | {fmt(attn_ms)} | {fmt(twin_ms)} "
          f"| {fmt(flex_ms)} | {speed} | {flex_ms / attn_ms:.2f}x "
          f"| {fmt(run_ms)} |", flush=True)
    del q, k, v, o
    torch.cuda.empty_cache()


def time_lens(lib, base, kernel, b, s, paged):
    """One row of the per-sequence-lengths table: GQA-4 (16 query heads
    over 4 K/V heads), causal document masking, kv_lens drawn in
    [s/2, s] (the last s); attn with its block mask (made before, and in
    _run), the same kernel of `base` (a library built before block masks
    took kv_lens) and Flex with the same mask on contiguous K/V."""
    g = torch.Generator().manual_seed(s + b)
    q = torch.randn(b, H, s, D, generator=g).half().cuda()
    k, v = (torch.randn(b, 4, s, D, generator=g).half().cuda()
            for _ in range(2))
    lens = torch.randint(s // 2, s + 1, (b,), generator=g, dtype=torch.int32)
    lens[-1] = s
    lens = lens.cuda()
    ids = document_ids(b, s, g)
    o = torch.empty_like(q)
    tensors = dict(q=q, o=o, kv_lens=lens, capture0=ids)
    if paged:
        kc, vc, table = paged_cache(k, v, g)
        tensors.update(k=kc, v=vc, block_table=table)
    else:
        tensors.update(k=k, v=v)
    flops = 4.0 * b * H * s * s * D / 2

    def fmt(ms):
        return (f"{flops / (ms * 1e-3) / 1e12:.1f} TF/s "
                f"({ms * 1e3:.1f} us)") if ms else "n/a"
    attn_ms, run_ms = attn_times(lib.kernels[kernel], tensors)
    base_ms = (median_ms(base.kernels[kernel].prepare(**tensors))
               if base else None)

    def mask(bi, hi, i, j):
        return (ids[bi, i] == ids[bi, j]) & (j <= i) & (j < lens[bi])
    block = create_block_mask(mask, b, None, s, s, device="cuda")
    fn = lambda: _flex(q, k, v, block_mask=block, enable_gqa=True)
    fn()
    flex_ms = median_ms(fn)
    print(f"| {kernel} | {b} x {s} | {fmt(attn_ms)} | {fmt(run_ms)} "
          f"| {fmt(base_ms)} | {fmt(flex_ms)} "
          f"| {base_ms / attn_ms:.2f}x | {flex_ms / attn_ms:.2f}x |"
          if base_ms else
          f"| {kernel} | {b} x {s} | {fmt(attn_ms)} | {fmt(run_ms)} "
          f"| n/a | {fmt(flex_ms)} | n/a | {flex_ms / attn_ms:.2f}x |",
          flush=True)
    del q, k, v, o, tensors
    torch.cuda.empty_cache()


def main():
    torch.cuda.init()
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    check_only = "--check-only" in sys.argv
    # --only=NAME: the checks of kernels whose name holds NAME (to run a
    # few under compute-sanitizer).
    only = next((a.split("=", 1)[1] for a in sys.argv[1:]
                 if a.startswith("--only=")), "")
    lib = Library(args[0] if args else "lib/libmods.so")
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"CUDA {torch.version.cuda}")
    failed = 0
    for kernel, score_mod, mask_mod, _, _ in CASES:
        if only not in kernel:
            continue
        # Prefill (a partial tile), and q_len 1 (the decode kernel the
        # library launches for q_len <= 16).
        for b, sq, sk in ((2, 1000, 1000), (1, 2048, 2048), (1, 300, 300),
                          (3, 1, 1000)):
            failed += not check(lib, kernel, score_mod, mask_mod, b, sq, sk)
    # Captures: positions past q_len index the ids too (the decode rows
    # see the last query), so the ids cover max(sq, sk) tokens.
    for kernel in CAPTURE_CASES + ["gqa_heads_documents",
                                   "documents_ids_wmma"]:
        if only not in kernel:
            continue
        hkv = 4 if kernel == "gqa_heads_documents" else H
        # (1, 300): a grid too small for the 128-row tile, so the runtime
        # takes a smaller one (the block mask's blocks hold several tiles).
        for b, sq, sk in ((2, 1000, 1000), (1, 2048, 2048), (1, 300, 300),
                          (3, 1, 1000)):
            g = torch.Generator().manual_seed(b * 131 + sq + sk)
            caps, score_mod, mask_mod = make_captures(kernel, b, max(sq, sk),
                                                      g)
            failed += not check(lib, kernel, score_mod, mask_mod, b, sq, sk,
                                caps, hkv)
    for lens in ([300, 1, 77, 1000, 129], [5, 3, 16]):
        if only in "packed_gqa_alibi_prefix":
            failed += not check_packed(lib, "packed_gqa_alibi_prefix", lens)
    # Block masks over per-sequence K/V lengths: kv_lens, and paged.
    for kernel, paged in (("documents_kv_lens", False),
                          ("documents_paged", True)):
        if only not in kernel:
            continue
        for b, sq, sk in ((3, 1000, 1000), (2, 300, 700), (4, 130, 2048)):
            failed += not check_lens(lib, kernel, b, sq, sk, paged)
    if check_only:
        print("all passed" if not failed else f"{failed} checks FAILED")
        return 1 if failed else 0
    # --lens-table[=BASE_LIBRARY]: only the per-sequence-lengths table,
    # against BASE's kernels if given.
    lens_arg = next((a for a in sys.argv[1:]
                     if a.startswith("--lens-table")), None)
    if lens_arg is not None:
        base = Library(lens_arg.split("=", 1)[1]) if "=" in lens_arg else None
        print("| kernel | B x S | attn (block mask reused) | attn _run "
              "| before (no block mask) | Flex (compiled, contiguous) "
              "| speed-up | attn/Flex |")
        print("|---|---|---|---|---|---|---|---|")
        for kernel, paged in (("documents_kv_lens", False),
                              ("documents_paged", True)):
            for b, s in ((4, 4096), (2, 8192), (1, 16384)):
                time_lens(lib, base, kernel, b, s, paged)
        print("all passed" if not failed else f"{failed} checks FAILED")
        return 1 if failed else 0
    print("| kernel | B x S | attn region | attn built-in | Flex (compiled) "
          "| region/built-in | attn/Flex | attn _run with its block mask |")
    print("|---|---|---|---|---|---|---|---|")
    for kernel, score_mod, mask_mod, twin, half in CASES:
        for b, s in ((4, 4096), (1, 16384)):
            time_row(lib, kernel, kernel, b, s, {}, score_mod, mask_mod,
                     twin, half)
    # The capture kernels: the captures' tensors are the same for attn and
    # Flex (its mods read them as captured buffers).
    twins = {"alibi_slopes": "alibi_region"}
    for kernel in CAPTURE_CASES:
        for b, s in ((4, 4096), (2, 8192), (1, 16384)):
            g = torch.Generator().manual_seed(s)
            caps, score_mod, mask_mod = make_captures(kernel, b, s, g)
            time_row(lib, kernel, f"{kernel} (capture)", b, s, caps,
                     score_mod, mask_mod, twins.get(kernel),
                     mask_mod is causal)
    print("all passed" if not failed else f"{failed} checks FAILED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
