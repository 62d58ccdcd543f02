#!/usr/bin/env python3
"""Tries a small set of schedules for the prefill kernels of a spec on the
GPU - block_q of 32, 64 or 128 query rows by block_kv of 32 or 64 keys on
the tier's warps, and 128-key tiles split among 8 warps (for grids smaller
than the GPU) - and records the fastest per shape.

Two steps, because the GPU machine has no LLVM:

    # here: one library holding every kernel under every candidate schedule
    python3 bench/autotune.py build examples/llama3_8b_prefill.mlir out/tune
    # on the GPU machine: time them (CUDA events, median of 30 after 5)
    python3 bench/autotune.py run out/tune/libvariants.so \\
        --size batch=4 --size q_len=4096 --size kv_len=4096

`run` prints each candidate's time, the winner per kernel as the
`schedule = <...>` to put on its attn.attention, and writes the winners to
schedules.json beside the library. Only prefill kernels (no static query
length) are tuned; the decode tier picks its own tile.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# (block_q, block_kv, warps); warps 0 is the tier's default.
CANDIDATES = [(32, 32, 0), (32, 64, 0), (64, 32, 0), (64, 64, 0), (128, 32, 0),
              (128, 64, 0), (32, 128, 8), (64, 128, 8)]
SUFFIX = re.compile(
    r"^(?P<base>.+)__q(?P<q>\d+)_kv(?P<kv>\d+)(_w(?P<w>\d+))?$")


def schedule_text(q, kv, warps):
    fields = f"block_q = {q}, block_kv = {kv}"
    return f"<{fields}, warps = {warps}>" if warps else f"<{fields}>"


def variants(spec_text):
    """The spec's functions, each once per candidate schedule, renamed
    <name>__q<block_q>_kv<block_kv>[_w<warps>]. Functions that already have
    a schedule are left out."""
    funcs = re.split(r"(?=^func\.func )", spec_text, flags=re.M)
    out = []
    for func in funcs:
        m = re.match(r"func\.func @(\w+)\(", func)
        if not m or "schedule" in func:
            continue
        end = func.index("\n  return")
        for q, kv, w in CANDIDATES:
            text = (func[:end] + f" schedule = {schedule_text(q, kv, w)}"
                    + func[end:])
            suffix = f"__q{q}_kv{kv}" + (f"_w{w}" if w else "")
            out.append(text.replace(f"@{m.group(1)}(",
                                    f"@{m.group(1)}{suffix}(", 1))
    return "\n".join(out)


def build(args):
    with open(args.spec) as f:
        text = variants(f.read())
    os.makedirs(args.out, exist_ok=True)
    spec = os.path.join(args.out, "variants.mlir")
    with open(spec, "w") as f:
        f.write(text)
    compile_tool = args.attn_compile or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build", "bin",
        "attn-compile")
    # A candidate the tier refuses (too much shared memory, say) is dropped
    # with its message.
    kept = []
    scratch = tempfile.mkdtemp(prefix="attn-autotune")
    for func in re.split(r"(?=^func\.func )", text, flags=re.M):
        if not func.strip():
            continue
        probe = os.path.join(scratch, "probe.mlir")
        with open(probe, "w") as f:
            f.write(func)
        r = subprocess.run([compile_tool, probe, f"--targets={args.targets}",
                            "--no-cubin", "-o", scratch],
                           capture_output=True, text=True)
        name = re.match(r"func\.func @(\w+)", func).group(1)
        if r.returncode == 0:
            kept.append(func)
        else:
            print(f"skip {name}: {r.stderr.strip().splitlines()[0]}")
    shutil.rmtree(scratch)
    with open(spec, "w") as f:
        f.write("\n".join(kept))
    subprocess.run([compile_tool, spec, f"--targets={args.targets}",
                    "--shared", "--name=variants", "-o", args.out],
                   check=True)
    print(f"{len(kept)} variants in {args.out}/libvariants.so")


def run(args):
    import torch
    sys.path.insert(0, os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "..", "examples", "python"))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from attn_library import DTYPES, AttnLibrary
    from peers import median_ms

    sizes = dict(s.split("=") for s in args.size)
    sizes = {k: int(v) for k, v in sizes.items()}
    lib = AttnLibrary(args.library)
    results = {}
    for name, kernel in lib.kernels.items():
        m = SUFFIX.match(name)
        if not m or kernel.tier not in ("mma", "wmma", "wgmma"):
            continue
        tensors = {}
        for operand in kernel.operands:
            shape = [sizes[d] if isinstance(d, str) else d
                     for d in operand["shape"]]
            dtype = DTYPES[operand["dtype"]]
            t = torch.randn(*shape, device="cuda").to(dtype)
            tensors[operand["name"]] = t
        ms = median_ms(kernel.prepare(**tensors))
        base = m.group("base")
        warps = int(m.group("w") or 0)
        print(f"{base} block_q={m.group('q')} block_kv={m.group('kv')}"
              f"{f' warps={warps}' if warps else ''}: {ms * 1e3:.1f} us",
              flush=True)
        best = results.get(base)
        if best is None or ms < best["ms"]:
            results[base] = {"block_q": int(m.group("q")),
                             "block_kv": int(m.group("kv")), "warps": warps,
                             "ms": ms, "sizes": sizes,
                             "device": torch.cuda.get_device_name()}
    for base, r in results.items():
        text = schedule_text(r["block_q"], r["block_kv"], r["warps"])
        print(f"winner {base}: schedule = {text} ({r['ms'] * 1e3:.1f} us)")
    path = os.path.join(os.path.dirname(args.library), "schedules.json")
    with open(path, "w") as f:
        json.dump(results, f, indent=2)
    print(f"wrote {path}")


def main():
    parser = argparse.ArgumentParser(
        description=" ".join(__doc__.split("\n\n")[0].split()))
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="compile the candidates (needs LLVM)")
    b.add_argument("spec")
    b.add_argument("out")
    b.add_argument("--targets", default="sm_80,sm_90")
    b.add_argument("--attn-compile", default=None)
    r = sub.add_parser("run", help="time the candidates (needs a GPU)")
    r.add_argument("library")
    r.add_argument("--size", action="append", default=[],
                   help="a dynamic size, e.g. batch=4 (one per size)")
    args = parser.parse_args()
    build(args) if args.command == "build" else run(args)


if __name__ == "__main__":
    main()
