#!/usr/bin/env python3
"""Times the peers on attn's benchmark shapes: PyTorch SDPA with the flash
(FlashAttention-2) and cuDNN backends, f16, CUDA events, median of 30 runs
after 5 warm-ups, each run after an L2 flush. Prints one line per shape and
backend in the units of attn_gpu_test's bench mode (TFLOP/s with FLOPs =
4 B Hq Sq Sk D, halved for causal; TB/s with K and V read once plus Q and
O)."""
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = [  # (name, B, Hq, Hkv, Sq, Sk, D, causal)
    ("prefill D128 S4096", 4, 16, 16, 4096, 4096, 128, False),
    ("prefill D128 S16384", 1, 16, 16, 16384, 16384, 128, False),
    ("prefill D128 S4096 causal", 4, 16, 16, 4096, 4096, 128, True),
    ("prefill D128 S16384 causal", 1, 16, 16, 16384, 16384, 128, True),
    ("prefill D64 S8192", 2, 32, 32, 8192, 8192, 64, False),
    ("prefill B1 H8 S512 D64", 1, 8, 8, 512, 512, 64, False),
    ("decode Hq32 Hkv8 Sk131072", 1, 32, 8, 1, 131072, 128, False),
    ("decode Hq32 Hkv8 Sk16384", 1, 32, 8, 1, 16384, 128, False),
    ("decode B64 Hq32 Hkv8 Sk4096", 64, 32, 8, 1, 4096, 128, False),
]
BACKENDS = [("flash", SDPBackend.FLASH_ATTENTION),
            ("cudnn", SDPBackend.CUDNN_ATTENTION)]


_flush = None


def median_ms(fn, warmup=5, reps=30):
    """Median time of fn() on the GPU. Each run follows a 256 MiB memset,
    as in triton.testing.do_bench: it evicts L2 (50 MiB on an H100) and
    keeps the GPU busy while Python queues the start event and the launch,
    so small kernels are timed cold and without launch latency."""
    global _flush
    if _flush is None:
        _flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for _ in range(warmup):
        fn()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        _flush.zero_()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def main():
    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}")
    for name, b, hq, hkv, sq, sk, d, causal in SHAPES:
        q = torch.randn(b, hq, sq, d, device="cuda", dtype=torch.float16)
        k = torch.randn(b, hkv, sk, d, device="cuda", dtype=torch.float16)
        v = torch.randn(b, hkv, sk, d, device="cuda", dtype=torch.float16)
        flops = 4.0 * b * hq * sq * sk * d / (2 if causal else 1)
        nbytes = 2.0 * (q.numel() * 2 + k.numel() + v.numel())
        for label, backend in BACKENDS:
            try:
                with sdpa_kernel(backend):
                    fn = lambda: F.scaled_dot_product_attention(
                        q, k, v, is_causal=causal, enable_gqa=hq != hkv)
                    ms = median_ms(fn)
                print(f"PEER {label} {name}: median={ms * 1e3:.1f}us "
                      f"{flops / (ms * 1e-3) / 1e12:.1f}TFLOP/s "
                      f"{nbytes / (ms * 1e-3) / 1e12:.2f}TB/s", flush=True)
            except Exception as e:  # a backend that refuses the shape
                print(f"PEER {label} {name}: n/a ({type(e).__name__}: "
                      f"{str(e).splitlines()[0][:80]})", flush=True)
        del q, k, v
        torch.cuda.empty_cache()


if __name__ == "__main__":
    sys.exit(main())
