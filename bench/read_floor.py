#!/usr/bin/env python3
"""How fast one PyTorch kernel reads the K/V bytes of issue 18's small
decode rows, timed as compare.py times attn and the peers (peers.median_ms:
median of 30 after an L2 flush): torch.sum over them (a read-only
reduction), and a device copy of them (read and write). A decode call
cannot read its K/V faster than a reduction over the same bytes, so these
bound the TB/s such rows can reach on this GPU."""
import torch

from peers import median_ms

ROWS = [  # (label, K/V bytes: 2 * B * Hkv * Sk * D * 2)
    ("MQA Hq64 B1 Sk16k", 2 * 1 * 1 * 16384 * 128 * 2),
    ("GQA-4 B1 Sk4k", 2 * 1 * 8 * 4096 * 128 * 2),
    ("spec Sq4 GQA-8 B1 Sk16k", 2 * 1 * 4 * 16384 * 128 * 2),
    ("GQA-4 B1 Sk16k, MQA B8 Sk16k", 2 * 1 * 8 * 16384 * 128 * 2),
]


def main():
    print(torch.cuda.get_device_name(), torch.__version__)
    print("| K/V bytes of | MB | torch.sum | TB/s | copy | TB/s read |")
    print("|---|---|---|---|---|---|")
    for label, nbytes in ROWS:
        x = torch.randn(nbytes // 2, device="cuda", dtype=torch.float16)
        y = torch.empty_like(x)
        read = median_ms(lambda: x.sum(dtype=torch.float32)) * 1e3
        copy = median_ms(lambda: y.copy_(x)) * 1e3
        print(f"| {label} | {nbytes / 1e6:.1f} | {read:.1f} us | "
              f"{nbytes / read / 1e6:.2f} | {copy:.1f} us | "
              f"{nbytes / copy / 1e6:.2f} |")


if __name__ == "__main__":
    main()
