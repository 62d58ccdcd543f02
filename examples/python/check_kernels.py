#!/usr/bin/env python3
"""Runs the shipped examples' kernels from Python on PyTorch CUDA tensors,
through their attn-compile shared libraries, and checks them against a
float64 reference:

    attn-compile examples/llama3_8b_prefill.mlir --shared -o out/lib
    attn-compile examples/paged_decode.mlir --shared -o out/lib
    attn-compile examples/gemma2_softcap.mlir --shared -o out/lib
    python3 examples/python/check_kernels.py out/lib

Outputs are poisoned with NaN before each run; a refused call must leave
them so. Exits 1 on any failure.
"""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attn_library import AttnError, AttnLibrary  # noqa: E402

failures = 0


def report(ok, line):
    global failures
    failures += not ok
    print(f"{'PASS' if ok else 'FAIL'} {line}", flush=True)


def reference(q, k, v, kv_lens=None, scale=None, softcap=None,
              bottom_right=True):
    """float64 attention, causal (bottom-right: query i of Sq sees keys
    j <= i + len - Sq; else j <= i), scale 1/sqrt(D) unless given, an
    optional soft-cap, GQA by head groups. Rows with no key give O = 0 and
    LSE = -inf."""
    b, hq, sq, d = q.shape
    group = hq // k.shape[1]
    k = k.double().repeat_interleave(group, dim=1)
    v = v.double().repeat_interleave(group, dim=1)
    s = q.double() @ k.transpose(-1, -2) * (scale or 1 / math.sqrt(d))
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    sk = k.shape[2]
    lens = (kv_lens.long() if kv_lens is not None
            else torch.full((b,), sk, device=q.device))
    i = torch.arange(sq, device=q.device).view(1, 1, sq, 1)
    j = torch.arange(sk, device=q.device).view(1, 1, 1, sk)
    last = i + (lens.view(b, 1, 1, 1) - sq if bottom_right else 0)
    s = s.masked_fill((j > last) | (j >= lens.view(b, 1, 1, 1)), -math.inf)
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse.unsqueeze(-1)).nan_to_num(0.0)
    return p @ v, lse


def compare(name, o, lse, ref_o, ref_lse):
    unwritten = int(torch.isnan(o).sum()) + (
        int(torch.isnan(lse).sum()) if lse is not None else 0)
    o = o.double().nan_to_num(0.0)
    rel = float((o - ref_o).norm() / ref_o.norm().clamp_min(1e-30))
    line = f"{name}: rel_err={rel:.2e} unwritten={unwritten}"
    ok = rel <= 1e-2 and unwritten == 0
    if lse is not None:
        finite = torch.isfinite(ref_lse)
        lse_err = float((lse.double() - ref_lse)[finite].abs().max())
        empty_ok = bool((lse[~finite] == -math.inf).all())
        line += f" lse_err={lse_err:.2e}"
        ok = ok and lse_err <= 1e-3 and empty_ok
    report(ok, line)


def check_prefill(lib, batch, q_len, kv_len, stream):
    g = torch.Generator(device="cuda").manual_seed(q_len * 7919 + kv_len)
    def rand(*shape):
        return (torch.rand(*shape, generator=g, device="cuda") * 2 - 1).half()
    q, k, v = rand(batch, 32, q_len, 128), rand(batch, 8, kv_len, 128), rand(
        batch, 8, kv_len, 128)
    o = torch.full((batch, 32, q_len, 128), math.nan, dtype=torch.float16,
                   device="cuda")
    lse = torch.full((batch, 32, q_len), math.nan, device="cuda")
    with torch.cuda.stream(stream):
        lib.llama3_8b_prefill(q=q, k=k, v=v, o=o, lse=lse)
    stream.synchronize()
    compare(f"llama3_8b_prefill B={batch} Sq={q_len} Sk={kv_len}", o, lse,
            *reference(q, k, v))


def check_refusals(lib):
    # [B, S, H, D] memory viewed as [B, H, S, D]: the llama3 spec is
    # row-major, so the library refuses it and writes nothing.
    q = torch.randn(1, 64, 32, 128, device="cuda").half().transpose(1, 2)
    k = torch.randn(1, 8, 64, 128, device="cuda").half()
    o = torch.full((1, 32, 64, 128), math.nan, dtype=torch.float16,
                   device="cuda")
    lse = torch.full((1, 32, 64), math.nan, device="cuda")
    try:
        lib.llama3_8b_prefill(q=q, k=k, v=k, o=o, lse=lse)
        report(False, "transposed q was accepted")
    except AttnError as e:
        torch.cuda.synchronize()
        report(e.code == 4 and "q stride" in str(e) and
               bool(torch.isnan(o).all()),
               f"transposed q refused, o untouched: {e}")
    report(not lib.llama3_8b_prefill.can_implement(0, 64, 64),
           "can_implement(batch=0) is false")


def check_strided(lib, batch, seq):
    """gemma2_softcap reads [B, S, H, D] memory through [B, H, S, D]
    views: the tensors' own strides go to the kernel."""
    g = torch.Generator(device="cuda").manual_seed(seq)
    def bshd(h):
        x = torch.rand(batch, seq, h, 256, generator=g, device="cuda")
        return (x * 2 - 1).half().transpose(1, 2)
    q, k, v = bshd(8), bshd(4), bshd(4)
    o = torch.full((batch, seq, 8, 256), math.nan, dtype=torch.float16,
                   device="cuda").transpose(1, 2)
    lib.gemma2_softcap(q=q, k=k, v=v, o=o)
    torch.cuda.synchronize()
    ref_o, _ = reference(q, k, v, scale=0.0625, softcap=50.0,
                         bottom_right=False)
    compare(f"gemma2_softcap (strided [B,S,H,D]) B={batch} S={seq}", o, None,
            ref_o, None)


def check_paged_decode(lib, batch, max_len, block=16):
    g = torch.Generator(device="cuda").manual_seed(batch * 31 + max_len)
    max_blocks = (max_len + block - 1) // block
    num_blocks = batch * max_blocks + 3
    def rand(*shape):
        return (torch.rand(*shape, generator=g, device="cuda") * 2 - 1).half()
    q = rand(batch, 32, 1, 128)
    k_cache, v_cache = rand(num_blocks, 8, block, 128), rand(
        num_blocks, 8, block, 128)
    table = torch.randperm(num_blocks, generator=g, device="cuda")[
        :batch * max_blocks].view(batch, max_blocks).int()
    lens = torch.randint(0, max_len + 1, (batch,), generator=g,
                         device="cuda").int()
    lens[0] = max_len
    o = torch.full((batch, 32, 1, 128), math.nan, dtype=torch.float16,
                   device="cuda")
    lib.paged_decode(q=q, k=k_cache, v=v_cache, block_table=table,
                     kv_lens=lens, o=o)
    torch.cuda.synchronize()
    # The cache gathered into [B, Hkv, max_blocks * block, D].
    def gather(cache):
        return cache[table.long()].permute(0, 2, 1, 3, 4).reshape(
            batch, 8, max_blocks * block, 128)
    ref_o, _ = reference(q, gather(k_cache), gather(v_cache), lens)
    compare(f"paged_decode B={batch} max_len={max_len} "
            f"lens={lens.tolist()[:4]}...", o, None, ref_o, None)


def main():
    lib_dir = sys.argv[1] if len(sys.argv) > 1 else "out/lib"
    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}")
    prefill = AttnLibrary(os.path.join(lib_dir, "libllama3_8b_prefill.so"))
    decode = AttnLibrary(os.path.join(lib_dir, "libpaged_decode.so"))
    strided = AttnLibrary(os.path.join(lib_dir, "libgemma2_softcap.so"))
    stream = torch.cuda.Stream()
    # On an H100 (132 SMs) B=1 runs the kernel of 64 rows on 8 warps (2
    # groups of 64 keys), B=3 Sq=113 the 64x64 one and B=2 Sq=1023 the
    # 128-row one (attnrt_attention.h: prefill alternatives).
    # q_len 1 to 16 runs the library's split-K decode code (a workspace the
    # wrapper allocates), 17 the prefill code again.
    for batch, q_len, kv_len in [(1, 200, 256), (2, 1023, 1024), (1, 1, 239),
                                 (3, 113, 203), (2, 5, 3000), (1, 16, 700),
                                 (2, 17, 700), (4, 1, 1)]:
        check_prefill(prefill, batch, q_len, kv_len, stream)
    check_refusals(prefill)
    for batch, seq in [(1, 300), (2, 1000)]:
        check_strided(strided, batch, seq)
    for batch, max_len in [(1, 4096), (4, 1000), (16, 300)]:
        check_paged_decode(decode, batch, max_len)
    print(f"{'FAILED' if failures else 'all passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
