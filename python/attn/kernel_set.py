"""A prebuilt kernel set: the kernels attn.torch and attn.flash_attn ask for
with common models' head shapes, compiled ahead of time, so that a call
with those shapes loads a library and compiles nothing.

    python3 -m attn.kernel_set build [DIR] [--targets T,...] [--models M,...]
                                     [--dtypes f16,bf16]
    python3 -m attn.kernel_set list [--models M,...] [--dtypes ...]

DIR defaults to the installed package's own folder (attn/_kernels), which
attn.compile reads after its cache misses, as it reads every folder of
$ATTN_KERNEL_SETS (os.pathsep-separated): a set is a cache folder, keyed
the same way (spec text, targets, attn version), read-only at run time.
--targets defaults to the current CUDA device's target where PyTorch sees
one (what attn.torch compiles for), else attn.DEFAULT_TARGETS.

The forms, per model and per dtype (f16, bf16): prefill over [B, H, S, D]
(attn.torch.attention, causal) and over FlashAttention's [B, S, H, D]
views (flash_attn_func), packed varlen prefill (flash_attn_varlen_func,
attention_varlen), and one-query decode over a paged cache of 16-row
pages (attn.torch.attention with block_table). Sliding-window models also
get their window's forms, models with sinks (GPT-OSS) sinks of their
dtype in every form; a call with other facts (another scale, an LSE,
a page size) compiles as usual. `list` prints each spec's facts.
"""
import argparse
import concurrent.futures
import os
import sys
import time

from .spec import AttentionFacts

# Query heads, K/V heads, head dim; `window`: a sliding window's left
# extent (FlashAttention's window_size[0]) for the model's local layers;
# `softcap`: the logit soft-cap; `sinks`: attention sinks of the model's
# dtype (GPT-OSS's parameter, which transformers passes as s_aux).
MODELS = {
    "llama3-8b": dict(hq=32, hkv=8, d=128),
    "llama3-70b": dict(hq=64, hkv=8, d=128),
    "qwen2.5-7b": dict(hq=28, hkv=4, d=128),
    "qwen3-32b": dict(hq=64, hkv=8, d=128),
    "gemma2-9b": dict(hq=16, hkv=8, d=256, softcap=50.0, window=4095),
    "gemma3-12b": dict(hq=16, hkv=8, d=256, window=1023),
    "gpt-oss-20b": dict(hq=64, hkv=8, d=64, window=127, sinks=True),
}
DTYPES = ("f16", "bf16")
PAGE = 16


def facts(models=None, dtypes=DTYPES):
    """The AttentionFacts of the set, for `models` (default: all), each
    once (models of one head shape share their kernels)."""
    out = []
    for name in models or MODELS:
        m = dict(MODELS[name])
        softcap, window = m.pop("softcap", None), m.pop("window", None)
        sinks = m.pop("sinks", False)
        masks = [("causal", None)]
        if window is not None:
            masks.append(("window", (window, 0)))
        for dtype in dtypes:
            for mask, win in masks:
                common = dict(dtype=dtype, mask=mask, window=win,
                              softcap=softcap,
                              sinks=dtype if sinks else None, **m)
                out += [
                    AttentionFacts(**common),
                    AttentionFacts(strided=True, **common),
                    AttentionFacts(packed_q=True, packed_kv=True, **common),
                    AttentionFacts(q_len=1, block_size=PAGE, kv_lens=True,
                                   **common),
                ]
    return list(dict.fromkeys(out))


def package_dir():
    """The installed package's own kernel set folder."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "_kernels")


def default_targets():
    try:
        import torch
        if torch.cuda.is_available():
            from .torch import device_targets
            return device_targets()
    except ImportError:
        pass
    from .compiler import DEFAULT_TARGETS
    return DEFAULT_TARGETS


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m attn.kernel_set",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("build", "list"))
    parser.add_argument("dir", nargs="?", default=None)
    parser.add_argument("--targets", default=None)
    parser.add_argument("--models", default=None,
                        help=f"comma-separated, of {', '.join(MODELS)}")
    parser.add_argument("--dtypes", default=",".join(DTYPES))
    parser.add_argument("--compiler", default=None)
    parser.add_argument("--jobs", "-j", type=int, default=2,
                        help="attn-compile runs at once (default 2: each "
                        "lowers a spec's one or two modules on its own "
                        "threads, so two keep the cores busy)")
    args = parser.parse_args(argv)
    models = args.models.split(",") if args.models else None
    for m in models or ():
        if m not in MODELS:
            parser.error(f"unknown model {m!r}; the set has "
                         f"{', '.join(MODELS)}")
    dtypes = args.dtypes.split(",")
    for d in dtypes:
        if d not in DTYPES:
            parser.error(f"unknown dtype {d!r}; the set has {DTYPES}")
    specs = facts(models, dtypes)
    if args.command == "list":
        for f in specs:
            print(f)
        return 0
    targets = (args.targets.split(",") if args.targets
               else list(default_targets()))
    folder = os.path.abspath(args.dir or package_dir())
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    start = time.time()
    done = 0

    def build(f):
        t = time.time()
        f.compile(targets=targets, cache_dir=folder, compiler=args.compiler)
        return f, time.time() - t

    # attn.compile is safe from several threads: each call compiles in a
    # folder of its own and renames it into the cache.
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for f, seconds in pool.map(build, specs):
            done += 1
            print(f"[{done}/{len(specs)}] {seconds:5.1f}s {f}", flush=True)
    print(f"{len(specs)} kernels for {','.join(targets)} in {folder} "
          f"({time.time() - start:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
