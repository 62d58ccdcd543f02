#!/usr/bin/env python3
"""Context-parallel causal attention over N GPUs with attn's kernels and
torch.distributed (NCCL): each rank holds a zigzag slice of the sequence,
K/V travel around the ring by P2P while attn's kernels run, and the
partial results merge through their LSEs (attn.merge_states).

    torchrun --nproc_per_node=2 examples/context_parallel.py --seq 131072

Checks the gathered output against attn's one-GPU kernel on rank 0 and
prints the time of both (median of --reps runs after warm-up, CUDA
events; the ring's time is the slowest rank's). GQA Hq 32 / Hkv 8, D 128,
bf16 (python/tests/gpu_cases.py's CP). Forward only: there is no
backward. The test is python/tests/test_context_parallel.py.
"""
import argparse
import os
import sys

import torch
import torch.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "python"),
                os.path.join(HERE, "..", "python", "tests")]
import attn.context_parallel as cp  # noqa: E402
import attn.torch as at  # noqa: E402
import gpu_cases  # noqa: E402


def timed(fn, reps, barrier):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        if barrier:
            dist.barrier()
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=131072)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--no-causal", dest="causal", action="store_false")
    args = parser.parse_args()
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dist.init_process_group("nccl")
    C = gpu_cases.CP
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[C["dtype"]]
    gen = torch.Generator(device="cuda").manual_seed(0)  # same on all ranks

    def rand(*shape):
        return (torch.rand(*shape, generator=gen, device="cuda") * 2 -
                1).to(dtype)
    q = rand(1, C["Hq"], args.seq, C["D"])
    k = rand(1, C["Hkv"], args.seq, C["D"])
    v = rand(1, C["Hkv"], args.seq, C["D"])
    ql, kl, vl = cp.zigzag_shard(q), cp.zigzag_shard(k), cp.zigzag_shard(v)

    def ring():
        return cp.ring_attention(ql, kl, vl, causal=args.causal)
    o = cp.zigzag_unshard(ring())
    ring_ms = torch.tensor(timed(ring, args.reps, True), device="cuda")
    dist.all_reduce(ring_ms, op=dist.ReduceOp.MAX)
    if rank == 0:
        def one():
            return at.attention(q, k, v, causal=args.causal)
        ref = one()
        rel = float((o.double() - ref.double()).norm() / ref.double().norm())
        one_ms = timed(one, args.reps, False)
        flops = 4 * C["Hq"] * args.seq * args.seq * C["D"] / (
            2 if args.causal else 1)
        ring_t = float(ring_ms)
        print(f"S={args.seq} Hq={C['Hq']} Hkv={C['Hkv']} D={C['D']} "
              f"{C['dtype']} causal={args.causal}: {world} GPUs "
              f"{ring_t:.2f} ms ({flops / ring_t / 1e9:.0f} TFLOP/s), one "
              f"GPU {one_ms:.2f} ms ({flops / one_ms / 1e9:.0f} TFLOP/s): "
              f"{one_ms / ring_t:.2f}x; rel diff vs one GPU {rel:.1e}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
