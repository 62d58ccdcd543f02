#!/usr/bin/env python3
"""Times attn's composable attention states on one GPU (median of 30 runs
after 5 warm-ups, CUDA events, each run after an L2 flush: peers.py's
median_ms):

  merge    attn.torch.merge_states of N parts [N, T, H, 128] into O, in
           GB/s of bytes moved (the parts and their LSEs read once, O and
           the LSE written once), replayed from a CUDA graph, against the
           copy ceiling (a device-to-device copy of the same bytes, read +
           written, in the same run) and the same formula in PyTorch ops
           (graphed too); N up to 8 runs a kernel with N fixed, 12 the
           loop over a dynamic N;
  cascade  two-level cascade decode (attn.cascade: a 32k shared prefix,
           GQA-4 D128, B 64 and 128, suffixes of 1-256 tokens), against
           attn's own paged decode of the same batch (each request's
           block table naming the shared prefix pages, then its own),
           both replayed from CUDA graphs (the GPU's time) and called
           eagerly (with attn.torch's host time); then each of the
           cascade's launches and its merge replayed alone.

Kernels come from attn.compile's cache (gpu_cases.compose_facts, filled by
python/tools/prefill_cache.py where attn-compile runs)."""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "python"),
                os.path.join(HERE, "..", "python", "tests")]
import attn.torch as at  # noqa: E402
import gpu_cases  # noqa: E402
from peers import median_ms  # noqa: E402


def eager_merge(o_parts, lse_parts):
    m = lse_parts.max(0).values
    w = torch.exp(lse_parts - m)
    total = w.sum(0)
    o = (w.unsqueeze(-1) * o_parts.float()).sum(0) / total.unsqueeze(-1)
    return o.to(o_parts.dtype), m + torch.log(total)


def bench_merge():
    print("merge_states: parts [N, T=16384, H=32, 128], LSE f32; GB/s of "
          "bytes moved")
    for dtype in (torch.float16, torch.float32):
        for n in (2, 4, 12):
            t, h, d = 16384, 32, 128
            parts = torch.randn(n, t, h, d, device="cuda").to(dtype)
            lse = torch.randn(n, t, h, device="cuda") * 4
            moved = (parts.numel() * parts.element_size() + lse.numel() * 4 +
                     t * h * d * parts.element_size() + t * h * 4)
            # The kernel's time from a CUDA graph (no host time); the
            # eager call's adds attn.torch's (about 130 us a call).
            ms = median_ms(graphed(lambda: at.merge_states(parts, lse)))
            eager_call_ms = median_ms(lambda: at.merge_states(parts, lse))
            src = torch.empty(moved // 2, dtype=torch.uint8, device="cuda")
            dst = torch.empty_like(src)
            copy_ms = median_ms(lambda: dst.copy_(src))
            torch_ms = median_ms(graphed(lambda: eager_merge(parts, lse)))
            gbs = moved / ms / 1e6
            ceiling = 2 * src.numel() / copy_ms / 1e6
            print(f"  {str(dtype)[6:]:8s} N={n}: attn {ms * 1e3:6.1f} us "
                  f"{gbs:5.0f} GB/s = {gbs / ceiling:.2f}x the copy ceiling "
                  f"({ceiling:.0f} GB/s); torch ops {torch_ms * 1e3:7.1f} us "
                  f"({torch_ms / ms:.1f}x attn's time); attn eager call "
                  f"{eager_call_ms * 1e3:6.1f} us")


def bench_cascade(chunk_tokens):
    B = gpu_cases.CASCADE_BENCH
    print(f"cascade decode: {B['dtype']} Hq={B['Hq']} Hkv={B['Hkv']} "
          f"D={B['D']} page {B['block']}, shared prefix {B['prefix']} in "
          f"chunks of {chunk_tokens}, suffixes 1..{B['max_suffix']}")
    for b in B["batches"]:
        gen = torch.Generator().manual_seed(b)
        suffixes = torch.randint(1, B["max_suffix"] + 1, (b,),
                                 generator=gen).tolist()
        cascade, q, kc, vc, (prefix_pages, suffix_pages) = \
            gpu_cases.cascade_calls("cuda", B["dtype"], B["Hq"], B["Hkv"],
                                    B["D"], B["block"], b, B["prefix"],
                                    suffixes, chunk_tokens=chunk_tokens,
                                    gen=gen)
        # The baseline: every request's own block table, prefix first.
        width = max(len(prefix_pages) + len(s) for s in suffix_pages)
        table = torch.tensor([prefix_pages + s + [0] * (
            width - len(prefix_pages) - len(s)) for s in suffix_pages],
            dtype=torch.int32, device="cuda")
        lens = torch.tensor([B["prefix"] + s for s in suffixes],
                            dtype=torch.int32, device="cuda")
        q4 = q.view(b, 1, B["Hq"], B["D"]).transpose(1, 2)
        base = at.attention(q4, kc, vc, block_table=table, kv_lens=lens)
        got = cascade.run(q, (kc, vc))
        rel = float((got.double() - base.transpose(1, 2).reshape(
            got.shape).double()).norm() / base.double().norm())
        def cascade_call():
            return cascade.run(q, (kc, vc))

        def base_call():
            return at.attention(q4, kc, vc, block_table=table, kv_lens=lens)
        # Engines replay decode steps from CUDA graphs: the graphs' times
        # are the GPU's; the eager ones add attn.torch's host time a call
        # (about 130 us, RESULTS.md), which the cascade pays four times.
        t_cascade = median_ms(graphed(cascade_call))
        t_base = median_ms(graphed(base_call))
        e_cascade = median_ms(cascade_call)
        e_base = median_ms(base_call)
        kv_bytes = 2 * kc.element_size() * B["Hkv"] * B["D"] * (
            B["prefix"] + sum(suffixes))
        # Where the cascade's time goes: each launch, then the merge of
        # their parts, replayed alone.
        parts, lses, steps = [], [], []
        for level in cascade._levels:
            q_level = q if level.chunks == 1 else q.repeat(level.chunks, 1, 1)

            def launch(level=level, q_level=q_level):
                return at.attention_varlen(
                    q_level, kc, vc, level.cu_seqlens_q, None,
                    level.max_q_len, causal=level.causal,
                    block_table=level.block_table, kv_lens=level.kv_lens,
                    return_lse=True)
            o, lse = launch()
            parts.append(o.view(level.chunks, q.shape[0], *o.shape[1:]))
            lses.append(lse.view(level.chunks, q.shape[0], lse.shape[1]))
            steps.append((f"launch of {level.cu_seqlens_q.numel() - 1} "
                          f"sequences", launch))
        o_all, lse_all = torch.cat(parts), torch.cat(lses)
        steps.append((f"merge of {o_all.shape[0]} parts",
                      lambda: at.merge_states(o_all, lse_all)))
        breakdown = ", ".join(f"{what} {median_ms(graphed(fn)) * 1e3:.1f} us"
                              for what, fn in steps)
        print(f"  B={b:4d}: CUDA graphs: cascade {t_cascade * 1e3:7.1f} us, "
              f"paged decode {t_base * 1e3:7.1f} us: "
              f"{t_base / t_cascade:5.1f}x; eager calls: "
              f"{e_cascade * 1e3:7.1f} us vs {e_base * 1e3:7.1f} us: "
              f"{e_base / e_cascade:4.1f}x (distinct K/V "
              f"{kv_bytes / 1e6:.0f} MB; rel diff {rel:.1e})\n"
              f"         alone: {breakdown}")


def graphed(fn):
    """fn captured once in a CUDA graph (after a warm-up call on a side
    stream, as torch.cuda.graphs asks); returns the replay."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", nargs="*", default=["merge", "cascade"])
    parser.add_argument("--chunk-tokens", type=int, nargs="+",
                        default=[2048],
                        help="the cascade's prefix chunks (keys); several "
                             "run one after another")
    args = parser.parse_args()
    if "merge" in args.which:
        bench_merge()
    if "cascade" in args.which:
        for chunk_tokens in args.chunk_tokens:
            bench_cascade(chunk_tokens)
