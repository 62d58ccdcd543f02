#!/usr/bin/env python3
"""The host time of an attn.torch call: a paged decode (B32, 4096 keys in
pages of 256, 32/8 heads of 128, bf16) called back to back, whose GPU work
is shorter than the Python around it, so the rate is the host's; then a
cProfile of the calls (--profile).

    python3 bench/torch_call_overhead.py --fill-cache CACHE   # where attn-compile runs
    ATTN_CACHE_DIR=CACHE ATTN_TARGETS=sm_90a python3 bench/torch_call_overhead.py
"""
import argparse
import cProfile
import os
import pstats
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "python"),
                os.path.join(HERE, "..", "python", "tests")]

import torch  # noqa: E402

B, K, PAGE, HQ, HKV, D = 32, 4096, 256, 32, 8, 128


def call(device):
    """The call, on `device` (the CPU only to record its kernel)."""
    from attn import flash_attn
    q = torch.randn(B, HQ, 1, D, device=device).to(torch.bfloat16)
    cache = torch.randn(B * K // PAGE + 1, HKV, PAGE, D,
                        device=device).to(torch.bfloat16)
    table = torch.arange(B * K // PAGE, dtype=torch.int32,
                         device=device).view(B, -1)
    lens = torch.full((B,), K, dtype=torch.int32, device=device)
    return lambda: flash_attn._ops().attention(
        q, cache, cache, block_table=table, kv_lens=lens, causal=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fill-cache")
    parser.add_argument("--targets", default="sm_90a")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    if args.fill_cache:
        import gpu_cases
        for f in gpu_cases.recorded_facts(lambda: call("cpu")()):
            f.compile(targets=args.targets.split(","),
                      cache_dir=args.fill_cache)
            print(f)
        return 0
    f = call("cuda")
    for _ in range(20):
        f()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(args.calls):
        f()
    torch.cuda.synchronize()
    print(f"{torch.cuda.get_device_name()}: "
          f"{(time.perf_counter() - start) / args.calls * 1e6:.1f} us a call "
          f"back to back ({args.calls} calls)")
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(args.calls):
            f()
        profile.disable()
        torch.cuda.synchronize()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
