#!/usr/bin/env python3
"""Charts of bench/compare.py's --json output: prefill TFLOP/s and decode
TB/s per shape, one bar per implementation (attn, FA2, cuDNN, Flex); a
shape an implementation cannot run has no bar for it. Needs matplotlib,
not PyTorch:

    python3 bench/plot.py compare.json -o bench/
    # bench/prefill_tflops.png, bench/decode_tbps.png
"""
import argparse
import json
import os
import sys

NAMES = {"attn": "attn", "flash": "FA2 (SDPA flash)",
         "cudnn": "cuDNN (SDPA)", "flex": "FlexAttention (compiled)"}
COLORS = {"attn": "tab:blue", "flash": "tab:orange", "cudnn": "tab:green",
          "flex": "tab:red"}


def chart(records, kind, metric, unit, title, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in records if r["kind"] == kind]
    labels = list(dict.fromkeys(r["label"] for r in rows))
    impls = [i for i in NAMES if any(r["impl"] == i for r in rows)]
    impls += sorted({r["impl"] for r in rows} - set(impls))
    value = {(r["label"], r["impl"]): r[metric] for r in rows}
    # An implementation that ran no shape gets no bar and no legend entry.
    impls = [i for i in impls
             if any(value.get((label, i)) is not None for label in labels)]
    width = 0.8 / max(1, len(impls))
    fig, ax = plt.subplots(figsize=(max(8, 0.55 * len(labels) * len(impls)
                                        / 2 + 3), 5))
    for n, impl in enumerate(impls):
        xs = [i + (n - (len(impls) - 1) / 2) * width
              for i, label in enumerate(labels)
              if value.get((label, impl)) is not None]
        ys = [value[(label, impl)] for label in labels
              if value.get((label, impl)) is not None]
        name = NAMES.get(impl, impl)
        if len(ys) < len(labels):
            name += f" (n/a on {len(labels) - len(ys)})"
        ax.bar(xs, ys, width, label=name, color=COLORS.get(impl))
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel(unit)
    ax.set_title(title, pad=28)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncol=len(impls), loc="lower center",
              bbox_to_anchor=(0.5, 1.0), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return len(labels), impls


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", help="compare.py --json output")
    parser.add_argument("-o", "--out", default=".", help="folder for PNGs")
    args = parser.parse_args()
    with open(args.json) as f:
        data = json.load(f)
    records = data["records"]
    where = f"{data.get('device', '?')}, torch {data.get('torch', '?')}, f16"
    os.makedirs(args.out, exist_ok=True)
    for kind, metric, unit, name in [
            ("prefill", "tflops", "TFLOP/s", "prefill_tflops.png"),
            ("decode", "tbps", "TB/s", "decode_tbps.png")]:
        if not any(r["kind"] == kind for r in records):
            continue
        path = os.path.join(args.out, name)
        shapes, impls = chart(records, kind, metric, unit,
                              f"attention {kind} {unit} ({where})", path)
        print(f"wrote {path}: {shapes} shapes x {', '.join(impls)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
