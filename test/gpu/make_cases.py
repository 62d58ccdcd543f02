#!/usr/bin/env python3
"""Writes the GPU suite's kernel specs and case list into a bundle folder.

Each kernel spec is one attn.attention; each case runs one spec's kernel on
one size. scripts/pack-gpu.sh compiles the specs to PTX and builds the host
program that runs the cases (attn_gpu_test.cpp).
"""
import os
import sys

# name: (Hq, Hkv, D, Dv, mask, scale, softcap, lse)
# mask: (left, right, bottom_right) with -1 for unbounded; None for no mask.
KERNELS = {
    "mha_d64": (4, 4, 64, 64, None, None, None, True),
    "gqa4_d64_causal": (8, 2, 64, 64, (-1, 0, False), None, None, True),
    "gqa8_d128_causal_br": (8, 1, 128, 128, (-1, 0, True), None, None, True),
    "mha_d128_window": (2, 2, 128, 128, (100, 0, False), None, None, True),
    "gqa4_d128_softcap": (8, 2, 128, 128, (-1, 0, False), 0.1, 30.0, True),
    "mqa_d64_window_br": (4, 1, 64, 64, (32, 16, True), None, None, True),
    "gqa4_d64_dv128": (8, 2, 64, 128, None, None, None, False),
    "gqa2_d128_causal": (4, 2, 128, 128, (-1, 0, False), None, None, True),
}

# Benchmark shapes of DESIGN.md (B * S = 16k tokens, hidden 2048) and the
# seed's small prefill: name -> list of (B, Sq, Sk).
BENCH_KERNELS = {
    "bench_h16_d128": ((16, 16, 128, 128, None, None, None, False),
                       [(4, 4096, 4096), (1, 16384, 16384)]),
    "bench_h16_d128_causal": ((16, 16, 128, 128, (-1, 0, False), None, None,
                               False), [(4, 4096, 4096), (1, 16384, 16384)]),
    "bench_h32_d64": ((32, 32, 64, 64, None, None, None, False),
                      [(2, 8192, 8192)]),
    "bench_h8_d64": ((8, 8, 64, 64, None, None, None, False),
                     [(1, 512, 512)]),
}

# (B, Sq, Sk): ragged tails, Sq != Sk both ways, one-row queries.
SIZES = [(1, 113, 203), (2, 1, 239), (1, 799, 3), (1, 1023, 1024),
         (2, 64, 64), (1, 203, 113), (3, 17, 300), (1, 257, 129)]


def spec(name, hq, hkv, d, dv, mask, scale, softcap, lse):
    q = f"memref<?x{hq}x?x{d}xf16>"
    k = f"memref<?x{hkv}x?x{d}xf16>"
    v = f"memref<?x{hkv}x?x{dv}xf16>"
    o = f"memref<?x{hq}x?x{dv}xf16>"
    l = f"memref<?x{hq}x?xf32>"
    args = [f"%q: {q}", f"%k: {k}", f"%v: {v}", f"%o: {o}"]
    op = (f"  attn.attention q(%q : {q}) k(%k : {k}) v(%v : {v})\n"
          f"      -> o(%o : {o})")
    if lse:
        args.append(f"%lse: {l}")
        op += f" lse(%lse : {l})"
    if scale:
        op += f" scale = {scale}"
    if mask:
        left, right, br = mask
        align = ", bottom_right" if br else ""
        if left < 0 and right == 0:
            op += f" mask = <causal{align}>"
        else:
            op += f" mask = <window {left}, {right}{align}>"
    if softcap:
        op += f" softcap = {softcap}"
    return f"func.func @{name}({', '.join(args)}) {{\n{op}\n  return\n}}\n"


def main(out):
    os.makedirs(os.path.join(out, "specs"), exist_ok=True)
    lines = ["# kernel ptx hq hkv d dv left right bottom_right scale softcap "
             "lse batch sq sk"]
    for name, (hq, hkv, d, dv, mask, scale, softcap, lse) in KERNELS.items():
        with open(os.path.join(out, "specs", name + ".mlir"), "w") as f:
            f.write(spec(name, hq, hkv, d, dv, mask, scale, softcap, lse))
        left, right, br = mask if mask else (-1, -1, False)
        sc = scale if scale else d ** -0.5
        for b, sq, sk in SIZES:
            lines.append(f"{name}_wmma {name}.ptx {hq} {hkv} {d} {dv} {left} "
                         f"{right} {int(br)} {sc!r} {softcap or 0} {int(lse)} "
                         f"{b} {sq} {sk}")
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    bench = lines[:1]
    for name, ((hq, hkv, d, dv, mask, scale, softcap, lse), sizes) in \
            BENCH_KERNELS.items():
        with open(os.path.join(out, "specs", name + ".mlir"), "w") as f:
            f.write(spec(name, hq, hkv, d, dv, mask, scale, softcap, lse))
        left, right, br = mask if mask else (-1, -1, False)
        for b, sq, sk in sizes:
            bench.append(f"{name}_wmma {name}.ptx {hq} {hkv} {d} {dv} {left} "
                         f"{right} {int(br)} {d ** -0.5!r} 0 0 {b} {sq} {sk}")
    with open(os.path.join(out, "bench.txt"), "w") as f:
        f.write("\n".join(bench) + "\n")
    print(f"{len(KERNELS)} kernels, {len(lines) - 1} cases in {out}")


if __name__ == "__main__":
    main(sys.argv[1])
