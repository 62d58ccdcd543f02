"""Context parallelism (attn.context_parallel) on two GPUs: ring attention
over zigzag shards of a sequence, against float64 attention of the whole
sequence and against attn's one-GPU kernel. Skipped without two CUDA
GPUs (PyTorch, NCCL). Runs under pytest or as a script."""
import math
import os
import sys
import tempfile
import unittest

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    GPUS = torch.cuda.device_count() if torch.cuda.is_available() else 0
except ImportError:
    torch = None
    GPUS = 0

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]
import gpu_cases  # noqa: E402


def _rank_main(rank, world, init_file, result_dir):
    import attn.context_parallel as cp
    import attn.torch as at
    from test_gpu import check_close, reference
    at.POISON_OUTPUTS = True
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"file://{init_file}",
                            rank=rank, world_size=world)
    C = gpu_cases.COMPOSE
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[C["dtypes"][1]]
    report = []
    for causal in (True, False):
        for s in (64 * 2 * world, 1000 * 2 * world):
            gen = torch.Generator(device="cuda").manual_seed(5000 + s)
            q = (torch.rand(1, C["Hq"], s, C["D"], generator=gen,
                            device="cuda") * 2 - 1).to(dtype)
            k = (torch.rand(1, C["Hkv"], s, C["D"], generator=gen,
                            device="cuda") * 2 - 1).to(dtype)
            v = (torch.rand(1, C["Hkv"], s, C["D"], generator=gen,
                            device="cuda") * 2 - 1).to(dtype)
            o_local, lse_local = cp.ring_attention(
                cp.zigzag_shard(q), cp.zigzag_shard(k), cp.zigzag_shard(v),
                causal=causal, return_lse=True)
            o = cp.zigzag_unshard(o_local)
            lse = cp.zigzag_unshard(lse_local)
            if rank == 0:
                ref_o, ref_lse = reference(
                    q, k, v, mask="causal" if causal else "none")
                label = f"ring causal={causal} S={s}"
                check_close(label, o, ref_o, lse, ref_lse)
                one = at.attention(q, k, v, causal=causal)
                rel = float((o.double() - one.double()).norm() /
                            one.double().norm())
                err = float((o.double() - ref_o).norm() / ref_o.norm())
                report.append(f"{label}: rel_err vs float64 {err:.2e}, vs "
                              f"one GPU {rel:.2e}")
    if rank == 0:
        with open(os.path.join(result_dir, "report.txt"), "w") as f:
            f.write("\n".join(report) + "\n")
    dist.destroy_process_group()


def test_context_parallel_two_gpus():
    if GPUS < 2:
        raise unittest.SkipTest("needs two CUDA GPUs")
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(_rank_main, args=(2, os.path.join(tmp, "init"), tmp),
                 nprocs=2, join=True)
        with open(os.path.join(tmp, "report.txt")) as f:
            print(f.read(), end="")


if __name__ == "__main__":
    try:
        test_context_parallel_two_gpus()
        print("test_context_parallel_two_gpus: passed")
    except unittest.SkipTest as e:
        print(f"test_context_parallel_two_gpus: skipped ({e})")
