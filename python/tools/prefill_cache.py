#!/usr/bin/env python3
"""Fills an attn cache with every kernel the GPU tests (python/tests/
test_gpu.py) compile, where attn-compile runs, so the cache can be copied
to a GPU machine without LLVM:

    python3 python/tools/prefill_cache.py gpu-bundle/attn-cache
    # there: ATTN_CACHE_DIR=attn-cache PYTHONPATH=python python3 -m pytest ...

--list prints the entries without compiling. --missing compiles, instead,
the requests a GPU machine saved in DIR/missing (attn.compile saves each
compile that the cache could not serve there without attn-compile): copy
the cache back here, run --missing, and copy it there again. attn-compile
is found as attn.compile finds it (--compiler, $ATTN_COMPILE, PATH,
build/bin).
"""
import json
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import attn  # noqa: E402
import gpu_cases  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cache_dir")
    parser.add_argument("--targets", default=",".join(attn.DEFAULT_TARGETS))
    parser.add_argument("--compiler")
    parser.add_argument("--list", action="store_true",
                        help="print the cache keys, compile nothing")
    parser.add_argument("--missing", action="store_true",
                        help="compile the requests saved in DIR/missing")
    args = parser.parse_args()
    if args.missing:
        return compile_missing(args.cache_dir, args.compiler)
    targets = args.targets.split(",")
    jobs = [(os.path.relpath(p, gpu_cases.REPO),
             dict(spec=p)) for p in gpu_cases.SPEC_FILES]
    facts_list = gpu_cases.all_facts()
    try:  # attn.flash_attn's cases and the transformers client's kernels
        # need PyTorch (any version) here
        facts_list += (gpu_cases.flash_facts() + gpu_cases.hf_client_facts()
                       + gpu_cases.compose_facts() + gpu_cases.quant_facts()
                       + gpu_cases.mla_facts())
    except ImportError as e:
        print(f"skipping attn.flash_attn's kernels: {e}", file=sys.stderr)
    for facts in facts_list:
        jobs.append((repr(facts), dict(spec=facts.spec_text(facts.KERNEL),
                                       name=facts.library_name())))
    start = time.time()
    for label, job in jobs:
        if args.list:
            text, name = attn.compiler._read_spec(job["spec"])
            key = attn.cache_key(text, targets, job.get("name", name))
            print(f"{key} {label}")
            continue
        t = time.time()
        lib = attn.compile(targets=targets, cache_dir=args.cache_dir,
                           compiler=args.compiler, **job)
        print(f"{os.path.basename(lib.cache_entry)} {time.time() - t:5.1f}s "
              f"{label}", flush=True)
    if not args.list:
        print(f"{len(jobs)} libraries in {args.cache_dir} "
              f"({time.time() - start:.0f}s)")
    return 0


def compile_missing(cache_dir, compiler):
    """Compiles each request in cache_dir/missing as it was asked for (its
    name, targets, prefix and arguments, so under the same key), then
    removes it."""
    folder = os.path.join(cache_dir, "missing")
    names = sorted(n for n in os.listdir(folder) if n.endswith(".json")) \
        if os.path.isdir(folder) else []
    for n in names:
        path = os.path.join(folder, n)
        with open(path, encoding="utf-8") as f:
            request = json.load(f)
        t = time.time()
        lib = attn.compile(request["text"], targets=request["targets"],
                           cache_dir=cache_dir, compiler=compiler,
                           name=request["name"], prefix=request["prefix"],
                           extra_args=tuple(request["extra_args"]))
        os.remove(path)
        print(f"{os.path.basename(lib.cache_entry)} {time.time() - t:5.1f}s "
              f"{request['name']}", flush=True)
    print(f"{len(names)} saved requests compiled into {cache_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
