#!/usr/bin/env python3
"""The peers of issue 19's varlen rows, timed like attn_gpu_test's bench:
PyTorch SDPA's flash backend (FlashAttention-2) on the padded batch
[16, 32, max_len, 128] (causal, GQA 32/8) that a packed batch of 16
sequences with lengths from 64..4096 needs without varlen, and on 16 x 2048
(the same tokens in equal lengths); and, for issue 18's paged decode
rows, the contiguous decode [B, 32, 1, 128] over [B, 8, Sk, 128] at B 8
and 64, Sk 4k and 32k. Median of 30 runs with CUDA events,
each after a 256 MiB copy that evicts L2, after 5 warm-up runs.

    python3 varlen_peers.py
"""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def timed(fn):
    flush = torch.empty(128 << 20, dtype=torch.uint8, device="cuda")
    flush2 = torch.empty_like(flush)
    for _ in range(5):
        fn()
    times = []
    for _ in range(30):
        flush2.copy_(flush)
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def sdpa(b, s, backend):
    q = torch.randn(b, 32, s, 128, dtype=torch.float16, device="cuda")
    k = torch.randn(b, 8, s, 128, dtype=torch.float16, device="cuda")
    v = torch.randn_like(k)
    with sdpa_kernel(backend):
        return timed(lambda: F.scaled_dot_product_attention(
            q, k, v, is_causal=True, enable_gqa=True))


def main():
    # attn_gpu_test's fixed-seed draw (std::mt19937_64(19), lengths
    # uniform in [64, 4096]) gives 16 sequences of 37705 tokens, the
    # longest 3759: the padded batch without varlen is [16, 32, 3759, 128].
    print(f"device={torch.cuda.get_device_name()} torch={torch.__version__}")
    for name, backend in (("fa2", SDPBackend.FLASH_ATTENTION),
                          ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        for b, s in ((16, 3759), (16, 4096), (16, 2048)):
            try:
                ms = sdpa(b, s, backend)
                flops = 4 * b * 32 * s * s * 128 / 2
                print(f"{name} padded B={b} S={s} causal median_ms={ms:.4f} "
                      f"tflops={flops / ms / 1e9:.1f}")
            except RuntimeError as e:
                print(f"{name} padded B={b} S={s}: {str(e).splitlines()[0]}")
    decode_rows()


def decode(b, sk, backend):
    q = torch.randn(b, 32, 1, 128, dtype=torch.float16, device="cuda")
    k = torch.randn(b, 8, sk, 128, dtype=torch.float16, device="cuda")
    v = torch.randn_like(k)
    with sdpa_kernel(backend):
        return timed(lambda: F.scaled_dot_product_attention(
            q, k, v, enable_gqa=True))


def decode_rows():
    for name, backend in (("fa2", SDPBackend.FLASH_ATTENTION),
                          ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        for b in (8, 64):
            for sk in (4096, 32768):
                try:
                    ms = decode(b, sk, backend)
                    nbytes = 2 * b * 8 * sk * 128 * 2 + 2 * b * 32 * 128 * 2
                    print(f"{name} decode B={b} Sk={sk} median_ms={ms:.4f} "
                          f"tbps={nbytes / ms / 1e9:.2f}")
                except RuntimeError as e:
                    print(f"{name} decode B={b} Sk={sk}: "
                          f"{str(e).splitlines()[0]}")


if __name__ == "__main__":
    main()
