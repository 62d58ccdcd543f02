#!/usr/bin/env python3
"""Writes the GPU suite's kernel specs and case list into a bundle folder.

Each kernel spec is one attn.attention; each case runs one spec's kernel on
one size. scripts/pack-gpu.sh compiles the specs to PTX and builds the host
program that runs the cases (attn_gpu_test.cpp).
"""
import os
import sys

# name: (Hq, Hkv, D, Dv, mask, scale, softcap, lse[, sq, block_size, lens])
# sq: a static query length (decode specs; attn-select-tier sends them to
# the split-K decode tier), block_size: a paged K/V cache, lens: kv_lens.
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
    "gqa4_d96_causal_br": (8, 2, 96, 96, (-1, 0, True), None, None, True),
    "mha_d256_softcap": (2, 2, 256, 256, None, 0.0625, 50.0, True),
    "gqa2_d128_dv64": (4, 2, 128, 64, (-1, 0, False), None, None, True),
    # Window extents at the verifier's limit, 2^31-1 (issue 15: 2^63-1
    # overflowed): every key on that side is in the window.
    "gqa4_d64_window_max": (8, 2, 64, 64, (2147483647, 2147483647, False),
                            None, None, True),
    "mha_d128_window_left_max_br": (4, 4, 128, 128, (2147483647, 0, True),
                                    None, None, True),
    # Head dims that are multiples of 8, not 16 (issue 19): padded to 16
    # in shared memory, never read or written past the row.
    "gqa4_d40_causal": (8, 2, 40, 40, (-1, 0, False), None, None, True),
    "mha_d72_window_br": (4, 4, 72, 72, (64, 0, True), None, None, True),
    "gqa2_d104_softcap": (4, 2, 104, 104, None, 0.1, 30.0, True),
    "gqa4_d40_dv72": (8, 2, 40, 72, None, None, None, False),
    "mqa_d72_dv40_causal_br": (4, 1, 72, 40, (-1, 0, True), None, None, True),
    "mha_d136_dv120": (2, 2, 136, 120, None, None, None, True),
}

# Other schedules of some of them: (block_q, block_kv[, warps, stages]).
SCHEDULED_KERNELS = {"gqa4_d64_causal_t32x64": ("gqa4_d64_causal", (32, 64)),
                     "gqa4_d128_softcap_t32x32": ("gqa4_d128_softcap",
                                                  (32, 32)),
                     # The D128 default below sm_90 (pack-gpu builds for
                     # sm_90, where it is 128x64).
                     "gqa8_d128_causal_br_t128x32": ("gqa8_d128_causal_br",
                                                     (128, 32)),
                     # Warps past one per 16 rows split the keys of each
                     # K/V tile (mma tier): 2 groups of 64 keys, 2 of 32
                     # (D128), 4 of 32; O staged over Q and not (Dv > D).
                     "gqa4_d64_causal_w8": ("gqa4_d64_causal",
                                            (64, 128, 8, 0)),
                     "gqa4_d128_softcap_w8": ("gqa4_d128_softcap",
                                              (64, 64, 8, 0)),
                     "mqa_d64_window_br_w16": ("mqa_d64_window_br",
                                               (64, 128, 16, 0)),
                     "gqa4_d64_dv128_w8": ("gqa4_d64_dv128", (64, 64, 8, 0)),
                     # 8 warps on 128 rows split the rows only.
                     "mha_d64_w8": ("mha_d64", (128, 64, 8, 0)),
                     # 3 K/V stages in flight; 1 (loaded in the loop).
                     "gqa2_d128_causal_s3": ("gqa2_d128_causal",
                                             (128, 64, 0, 3)),
                     "mha_d64_s1": ("mha_d64", (64, 64, 0, 1)),
                     # Padded head dims with key groups and a 3-stage ring.
                     "mha_d72_window_br_w8": ("mha_d72_window_br",
                                              (64, 64, 8, 0)),
                     "gqa4_d40_causal_s3": ("gqa4_d40_causal",
                                            (128, 64, 0, 3))}

# bf16 prefill: the same kinds of spec; the wmma tier runs them on mma.sync.
BF16_KERNELS = ["gqa4_d64_causal", "gqa8_d128_causal_br", "gqa4_d128_softcap",
                "mqa_d64_window_br", "gqa4_d64_dv128", "mha_d256_softcap",
                "gqa2_d104_softcap"]

# f16 inputs with an f32 O (dtype "f16:f32"): the mma tier stages O as
# f32, over the warp's Q rows where it fits (D128, Dv64), else over all of
# shared memory after a block barrier.
F32_OUT_KERNELS = ["gqa4_d64_causal", "gqa4_d128_softcap", "gqa2_d128_dv64",
                   "gqa4_d40_dv72"]

DECODE_KERNELS = {
    "dec_gqa4_d128": (8, 2, 128, 128, None, None, None, True, 1, 0, False),
    "dec_gqa8_d128_lens": (8, 1, 128, 128, None, None, None, True, 1, 0,
                           True),
    "dec_paged16_gqa4_d128_causal": (8, 2, 128, 128, (-1, 0, True), None,
                                     None, True, 1, 16, False),
    "dec_paged1_gqa4_d64": (8, 2, 64, 64, None, None, None, True, 1, 1,
                            False),
    "dec_paged64_mha_d64_window": (4, 4, 64, 64, (100, 0, True), None, None,
                                   True, 1, 64, False),
    "dec_paged16_gqa4_d128_softcap_lens": (8, 2, 128, 128, None, 0.1, 30.0,
                                           True, 1, 16, True),
    "specdec_gqa4_d64_causal": (8, 2, 64, 64, (-1, 0, True), None, None, True,
                                4, 0, False),
    "dec_bf16_paged16_gqa4_d128": (8, 2, 128, 128, (-1, 0, True), None, None,
                                   True, 1, 16, True, None, "bf16"),
    "dec_gqa4_d128_window_max_br": (8, 2, 128, 128,
                                    (2147483647, 2147483647, True), None,
                                    None, True, 1, 0, False),
    # Issue 18's decode shapes: any group size (more than 16 rows take
    # several 16-row Q tiles), up to 16 queries, head dims that are
    # multiples of 8, Dv != D.
    "dec_mqa64_d128": (64, 1, 128, 128, None, None, None, True, 1, 0, False),
    "specdec4_gqa8_d128_causal": (16, 2, 128, 128, (-1, 0, True), None, None,
                                  True, 4, 0, True),
    "specdec16_gqa4_d64_causal_paged16": (8, 2, 64, 64, (-1, 0, True), None,
                                          None, True, 16, 16, False),
    "dec_gqa4_d40": (8, 2, 40, 40, None, None, None, True, 1, 0, False),
    "dec_gqa4_d72_dv40_paged16": (8, 2, 72, 40, None, None, None, True, 1,
                                  16, True),
    "dec_mha_d104_softcap": (4, 4, 104, 104, None, 0.1, 30.0, True, 1, 0,
                             False),
    "dec_gqa2_d64_dv256": (4, 2, 64, 256, None, None, None, True, 2, 0,
                           False),
    "dec_bf16_gqa8_d80_causal": (8, 1, 80, 80, (-1, 0, True), None, None,
                                 True, 3, 0, False, None, "bf16"),
}
# Paged prefill (chunked prefill: new queries against a paged cache that
# holds the earlier tokens too, bottom-right causal), on the prefill tiers:
# name -> (kernel as in KERNELS, block_size, lens[, dtype]).
PAGED_PREFILL_KERNELS = {
    "paged1_gqa4_d64_causal_br": ((8, 2, 64, 64, (-1, 0, True), None, None,
                                   True), 1, True),
    "paged16_gqa4_d128_causal_br": ((8, 2, 128, 128, (-1, 0, True), None,
                                     None, True), 16, True),
    "paged64_mha_d128_window_br": ((4, 4, 128, 128, (100, 0, True), None,
                                    None, True), 64, False),
    "paged16_gqa2_d72_softcap": ((4, 2, 72, 72, None, 0.1, 30.0, True), 16,
                                 True),
    "paged64_bf16_gqa8_d64_causal_br": ((8, 1, 64, 64, (-1, 0, True), None,
                                         None, True), 64, True, "bf16"),
}
# (B, Sq, Sk): chunks of new queries against longer caches, a chunk longer
# than the cache (its first rows see no key), single tokens.
PAGED_PREFILL_SIZES = [(2, 64, 300), (1, 129, 1000), (3, 17, 77),
                       (1, 300, 200), (2, 1, 33), (1, 512, 2048)]

# Packed (varlen) batches, issue 19: name -> (kernel as in KERNELS, form,
# block_size, max_q_len[, dtype]). form: packed_qkv (Q and K/V by
# cu_seqlens_q/k), packed_q (Q packed over a contiguous K/V with kv_lens,
# or over a paged cache: chunked prefill), packed_kv (K/V packed under a
# padded Q). A max_q_len of at most 16 takes the decode tier.
VARLEN_KERNELS = {
    "vl_gqa4_d128_causal_br": ((8, 2, 128, 128, (-1, 0, True), None, None,
                                True), "packed_qkv", 0, None),
    "vl_mha_d64": ((4, 4, 64, 64, None, None, None, True), "packed_qkv", 0,
                   None),
    "vl_gqa4_d40_causal_br": ((8, 2, 40, 40, (-1, 0, True), None, None,
                               True), "packed_qkv", 0, None),
    "vl_mha_d72_window_br": ((4, 4, 72, 72, (64, 0, True), None, None, True),
                             "packed_qkv", 0, None),
    "vl_gqa2_d104_softcap": ((4, 2, 104, 104, None, 0.1, 30.0, True),
                             "packed_qkv", 0, None),
    "vl_bf16_gqa8_d128_causal_br": ((8, 1, 128, 128, (-1, 0, True), None,
                                     None, True), "packed_qkv", 0, None,
                                    "bf16"),
    "vl_paged16_gqa4_d128_causal_br": ((8, 2, 128, 128, (-1, 0, True), None,
                                        None, True), "packed_q", 16, None),
    "vl_paged1_gqa4_d64_causal_br": ((8, 2, 64, 64, (-1, 0, True), None,
                                      None, True), "packed_q", 1, None),
    "vl_paged64_mha_d72_causal_br": ((4, 4, 72, 72, (-1, 0, True), None,
                                      None, False), "packed_q", 64, None),
    "vl_q_lens_gqa4_d64_causal_br": ((8, 2, 64, 64, (-1, 0, True), None,
                                      None, True), "packed_q", 0, None),
    "vl_kv_gqa4_d64_causal_br": ((8, 2, 64, 64, (-1, 0, True), None, None,
                                  True), "packed_kv", 0, None),
    "vl_dec_paged16_gqa4_d128": ((8, 2, 128, 128, (-1, 0, True), None, None,
                                  True), "packed_q", 16, 1),
    "vl_specdec4_gqa8_d128_causal_br": ((16, 2, 128, 128, (-1, 0, True),
                                         None, None, True), "packed_qkv", 0,
                                        4),
    "vl_dec_gqa4_d40": ((8, 2, 40, 40, None, None, None, True), "packed_qkv",
                        0, 2),
}
# (B, longest Sq, longest Sk): the first sequence is the longest, the
# second has one query, the third none (attn_gpu_test.cpp).
VARLEN_SIZES = [(3, 200, 300), (5, 64, 64), (1, 1000, 1100), (4, 17, 500),
                (8, 300, 300)]
# (B, longest Sk, splits) for the decode-tier ones (Sq = max_q_len).
VARLEN_DECODE_SIZES = [(4, 300, 0), (8, 1000, 0), (3, 50, 3)]

# (B, Sk, splits): splits 0 lets the host choose from Sk and the SM count.
DECODE_SIZES = [(1, 1, 0), (2, 239, 1), (2, 239, 3), (1, 1000, 16),
                (3, 777, 0), (1, 4097, 0), (2, 50, 16)]

# Benchmark shapes of DESIGN.md (B * S = 16k tokens, hidden 2048) and the
# seed's small prefill: name -> list of (B, Sq, Sk).
BENCH_KERNELS = {
    "bench_h16_d128": ((16, 16, 128, 128, None, None, None, False),
                       [(4, 4096, 4096), (1, 16384, 16384)]),
    "bench_h16_d128_causal": ((16, 16, 128, 128, (-1, 0, False), None, None,
                               False), [(4, 4096, 4096), (1, 16384, 16384)]),
    "bench_h32_d64": ((32, 32, 64, 64, None, None, None, False),
                      [(2, 8192, 8192)]),
    # Issue 17's D256 floor (at least FA2): hidden 2048 as 8 heads.
    "bench_h8_d256": ((8, 8, 256, 256, None, None, None, False),
                      [(4, 4096, 4096)]),
    "bench_h8_d256_causal": ((8, 8, 256, 256, (-1, 0, False), None, None,
                              False), [(4, 4096, 4096)]),
    "bench_h8_d64": ((8, 8, 64, 64, None, None, None, False),
                     [(1, 512, 512)]),
    # Tile-size variants (defaults: 128x32 at D128, 128x64 at D64).
    "bench_h16_d128_t64x32": ((16, 16, 128, 128, None, None, None, False,
                               None, 0, False, (64, 32)), [(4, 4096, 4096)]),
    "bench_h16_d128_t128x64": ((16, 16, 128, 128, None, None, None, False,
                                None, 0, False, (128, 64)), [(4, 4096, 4096)]),
    "bench_h16_d128_t128x32": ((16, 16, 128, 128, None, None, None, False,
                                None, 0, False, (128, 32)), [(4, 4096, 4096)]),
    "bench_h32_d64_t64x32": ((32, 32, 64, 64, None, None, None, False, None,
                              0, False, (64, 32)), [(2, 8192, 8192)]),
    "bench_h32_d64_t128x64": ((32, 32, 64, 64, None, None, None, False, None,
                               0, False, (128, 64)), [(2, 8192, 8192)]),
    "bench_h16_d128_t64x64": ((16, 16, 128, 128, None, None, None, False,
                               None, 0, False, (64, 64)), [(4, 4096, 4096)]),
    "bench_h32_d64_t64x64": ((32, 32, 64, 64, None, None, None, False, None,
                              0, False, (64, 64)), [(2, 8192, 8192)]),
    "bench_h32_d64_t128x32": ((32, 32, 64, 64, None, None, None, False, None,
                               0, False, (128, 32)), [(2, 8192, 8192)]),
    # The small seed shape on smaller tiles (more blocks for 132 SMs).
    "bench_h8_d64_t64x64": ((8, 8, 64, 64, None, None, None, False, None, 0,
                             False, (64, 64)), [(1, 512, 512)]),
    "bench_h8_d64_t64x32": ((8, 8, 64, 64, None, None, None, False, None, 0,
                             False, (64, 32)), [(1, 512, 512)]),
    "bench_h8_d64_t32x64": ((8, 8, 64, 64, None, None, None, False, None, 0,
                             False, (32, 64)), [(1, 512, 512)]),
    "bench_h8_d64_t32x32": ((8, 8, 64, 64, None, None, None, False, None, 0,
                             False, (32, 32)), [(1, 512, 512)]),
    # ... and with warps splitting each K/V tile's keys (shorter chains).
    "bench_h8_d64_t64x64_w8": ((8, 8, 64, 64, None, None, None, False, None,
                                0, False, (64, 64, 8, 0)), [(1, 512, 512)]),
    "bench_h8_d64_t64x128_w8": ((8, 8, 64, 64, None, None, None, False, None,
                                 0, False, (64, 128, 8, 0)), [(1, 512, 512)]),
    "bench_h8_d64_t64x128_w16": ((8, 8, 64, 64, None, None, None, False,
                                  None, 0, False, (64, 128, 16, 0)),
                                 [(1, 512, 512)]),
    "bench_h8_d64_t32x128_w8": ((8, 8, 64, 64, None, None, None, False, None,
                                 0, False, (32, 128, 8, 0)), [(1, 512, 512)]),
    "bench_h16_d128_w8": ((16, 16, 128, 128, None, None, None, False, None,
                           0, False, (128, 64, 8, 0)), [(4, 4096, 4096)]),
    "bench_h16_d128_bf16": ((16, 16, 128, 128, None, None, None, False, None,
                             0, False, None, "bf16"), [(4, 4096, 4096)]),
    "bench_h8_d64_bf16": ((8, 8, 64, 64, None, None, None, False, None, 0,
                           False, None, "bf16"), [(1, 512, 512)]),
    "bench_dec_h32_kv8_d128": ((32, 8, 128, 128, None, None, None, False, 1),
                               [(1, 1, 131072), (1, 1, 16384), (64, 1, 4096)]),
    # Issue 19's speed rows: a packed batch of 16 sequences (lengths drawn
    # from 64..4096 with a fixed seed in bench mode) against the same
    # tokens as one padded batch of equal lengths (16 x 2048, about the
    # mean), and paged prefill (a 512-token chunk over a 4k context,
    # block size 16) against the same chunk over a contiguous cache.
    "bench_vl_h32_kv8_d128_causal": ((32, 8, 128, 128, (-1, 0, True), None,
                                      None, False, None, 0, False, None,
                                      "f16", "packed_qkv"),
                                     [(16, 4096, 4096)]),
    "bench_h32_kv8_d128_causal_br": ((32, 8, 128, 128, (-1, 0, True), None,
                                      None, False),
                                     [(16, 2048, 2048), (8, 512, 4096)]),
    "bench_paged16_h32_kv8_d128_causal_br": ((32, 8, 128, 128, (-1, 0, True),
                                              None, None, False, None, 16,
                                              False), [(8, 512, 4096)]),
    # Issue 18's paged decode rows (block size 16, every sequence full)
    # and the contiguous decode on the same bytes.
    "bench_dec_paged16_h32_kv8_d128": ((32, 8, 128, 128, None, None, None,
                                        False, 1, 16, False),
                                       [(8, 1, 4096), (8, 1, 32768),
                                        (64, 1, 4096), (64, 1, 32768)]),
    "bench_dec_h32_kv8_d128_same_bytes": ((32, 8, 128, 128, None, None, None,
                                           False, 1),
                                          [(8, 1, 4096), (8, 1, 32768),
                                           (64, 1, 4096), (64, 1, 32768)]),
}

# Quantized-cache decode (issue 41's rows): GQA-4 D128 over fp8 and i8
# caches with per-token scales (the most bytes of scales), against the
# f16 rows above on the same shapes: name -> (FORMAT, block_size, sizes).
QUANT_BENCH_SIZES = [(1, 1, 131072), (8, 1, 16384), (64, 1, 4096)]
QUANT_BENCH = {
    "bench_q8_dec_h32_kv8_d128_e4m3": ("f8E4M3FN", 0, QUANT_BENCH_SIZES),
    "bench_q8_dec_h32_kv8_d128_i8": ("i8", 0, QUANT_BENCH_SIZES),
    "bench_q8_dec_paged16_h32_kv8_d128_e4m3": ("f8E4M3FN", 16,
                                               [(64, 1, 32768)]),
    "bench_q8_dec_paged16_h32_kv8_d128_i8": ("i8", 16, [(64, 1, 32768)]),
}
# The same with a scale per tensor (vLLM's default fp8 cache), which the
# tensor-core split kernel decodes: name -> (FORMAT, block_size, sizes).
QUANT_TENSOR_BENCH = {
    "bench_q8t_dec_h32_kv8_d128_e4m3": ("f8E4M3FN", 0, QUANT_BENCH_SIZES),
    "bench_q8t_dec_h32_kv8_d128_i8": ("i8", 0, QUANT_BENCH_SIZES),
    "bench_q8t_dec_paged16_h32_kv8_d128_e4m3": ("f8E4M3FN", 16,
                                                [(64, 1, 32768)]),
    "bench_q8t_dec_paged16_h32_kv8_d128_i8": ("i8", 16, [(64, 1, 32768)]),
}

# The benchmark shapes run again with sinks: name -> BENCH_KERNELS' name.
SINK_BENCH = {"bench_snk_h16_d128_causal": "bench_h16_d128_causal",
              "bench_snk_dec_paged16_h32_kv8_d128":
                  "bench_dec_paged16_h32_kv8_d128"}

# attn.cache_append kernels: name -> (Hkv, D, Dv, dtype, S_new (None:
# dynamic), block_size (0: contiguous), new_lens[, "slots"]). The
# slot-mapping form ("slots") takes packed tokens [T, Hkv, D] and
# slot_mapping [T] into a cache [N, Hkv, R, D] (R = block_size, or dynamic
# when 0).
APPEND_KERNELS = {
    "append_dec_h8_d128": (8, 128, 128, "f16", 1, 0, False),
    "append_dec_paged16_h8_d128": (8, 128, 128, "f16", 1, 16, False),
    "append_chunk_h8_d128": (8, 128, 128, "f16", None, 0, False),
    "append_chunk_paged16_h8_d128_ragged": (8, 128, 128, "bf16", None, 16,
                                            True),
    "append_paged1_h2_d64_ragged": (2, 64, 64, "f16", None, 1, True),
    "append_f32_h4_d96_dv64_ragged": (4, 96, 64, "f32", None, 0, True),
    # 72 bytes a row: 8-byte pieces.
    "append_h2_d36": (2, 36, 36, "f16", None, 0, False),
    "append_slots_paged16_h8_d128": (8, 128, 128, "f16", None, 16, False,
                                     "slots"),
    "append_slots_h4_d64_bf16": (4, 64, 64, "bf16", None, 0, False, "slots"),
}
# (B, S_new, kv_len) per kind of spec: decode (S_new = 1) and chunks.
APPEND_DECODE_SIZES = [(1, 1, 1), (3, 1, 300), (5, 1, 17), (64, 1, 4096)]
APPEND_CHUNK_SIZES = [(1, 1, 16), (2, 77, 200), (3, 33, 40), (4, 300, 1000),
                      (1, 4096, 8192)]
# Slot-mapping form: (N blocks, T tokens, R rows per block).
APPEND_SLOT_SIZES = {"append_slots_paged16_h8_d128": [(5, 37, 16), (1024, 64, 16),
                                                     (512, 4096, 16)],
                     "append_slots_h4_d64_bf16": [(3, 100, 50), (2, 1, 7)]}
# The benchmark: a decode step of B 64 and a prefill chunk of 4k tokens.
APPEND_BENCH = [("append_dec_h8_d128", (64, 1, 4096)),
                ("append_dec_paged16_h8_d128", (64, 1, 4096)),
                ("append_chunk_h8_d128", (1, 4096, 8192)),
                ("append_chunk_h8_d128", (4, 4096, 8192)),
                ("append_chunk_paged16_h8_d128_ragged", (1, 4096, 8192)),
                # vLLM's layout of the same two steps: 64 decode tokens,
                # a 4k chunk, each to its slot.
                ("append_slots_paged16_h8_d128", (1024, 64, 16)),
                ("append_slots_paged16_h8_d128", (512, 4096, 16))]


def append_spec(name, hkv, d, dv, dtype, s_new, block_size, new_lens,
                form="batched"):
    s = s_new or "?"
    kn = f"memref<?x{hkv}x{s}x{d}x{dtype}>"
    vn = f"memref<?x{hkv}x{s}x{dv}x{dtype}>"
    rows = block_size or "?"
    kc = f"memref<?x{hkv}x{rows}x{d}x{dtype}>"
    vc = f"memref<?x{hkv}x{rows}x{dv}x{dtype}>"
    if form == "slots":
        kn = f"memref<?x{hkv}x{d}x{dtype}>"
        vn = f"memref<?x{hkv}x{dv}x{dtype}>"
        return (f"func.func @{name}(%kn: {kn}, %vn: {vn}, "
                f"%slots: memref<?xi32>, %kc: {kc}, %vc: {vc}) {{\n"
                f"  attn.cache_append k_new(%kn : {kn}) v_new(%vn : {vn}) "
                f"slot_mapping(%slots : memref<?xi32>)\n"
                f"      -> k_cache(%kc : {kc}) v_cache(%vc : {vc})\n"
                f"  return\n}}\n")
    args = [f"%kn: {kn}", f"%vn: {vn}"]
    op = f"  attn.cache_append k_new(%kn : {kn}) v_new(%vn : {vn})"
    if block_size:
        args.append("%bt: memref<?x?xi32>")
        op += " block_table(%bt : memref<?x?xi32>)"
    args.append("%lens: memref<?xi32>")
    op += " kv_lens(%lens : memref<?xi32>)"
    if new_lens:
        args.append("%n: memref<?xi32>")
        op += " new_lens(%n : memref<?xi32>)"
    args += [f"%kc: {kc}", f"%vc: {vc}"]
    op += f"\n      -> k_cache(%kc : {kc}) v_cache(%vc : {vc})"
    return f"func.func @{name}({', '.join(args)}) {{\n{op}\n  return\n}}\n"


def append_line(name, kernel, size):
    hkv, d, dv, dtype, _, block_size, new_lens = kernel[:7]
    form = kernel[7] if len(kernel) > 7 else "batched"
    b, s_new, kv_len = size
    return (f"{name} {name}.ptx {hkv} {d} {dv} {dtype} {block_size} "
            f"{int(new_lens)} {b} {s_new} {kv_len} {form}")


# (B, Sq, Sk): ragged tails, Sq != Sk both ways, one-row queries.
SIZES = [(1, 113, 203), (2, 1, 239), (1, 799, 3), (1, 1023, 1024),
         (2, 64, 64), (1, 203, 113), (3, 17, 300), (1, 257, 129)]


# Attention sinks (a last column "sinks" in the case line; one logit per
# query head, drawn from [-2, 4) so that a sink sometimes dominates its
# row): name -> (kernel as in KERNELS, sinks dtype, dict of spec()'s
# keywords, sizes). Every tier: the mma prefill (and, through pack-gpu's
# variants, wmma and wgmma), the tensor-core and SIMT split-K decode with
# their combine, packed Q; empty rows (kv_lens 0, windows) get the sink's
# LSE.
SINK_KERNELS = {
    "snk_gqa4_d64_causal": ((8, 2, 64, 64, (-1, 0, False), None, None, True),
                            "f32", {}, [(b, sq, sk, 0) for b, sq, sk in SIZES]),
    "snk_bf16_gqa8_d128_causal_br_lens": (
        (8, 1, 128, 128, (-1, 0, True), None, None, True), "bf16",
        {"lens": True, "dtype": "bf16"},
        [(2, 64, 300, 0), (3, 17, 77, 0), (1, 300, 200, 0), (2, 1, 33, 0)]),
    "snk_mha_d128_window_softcap": (
        (4, 4, 128, 128, (32, 0, True), 0.1, 30.0, True), "f16", {},
        [(1, 113, 203, 0), (2, 64, 64, 0), (1, 257, 129, 0)]),
    "snk_dec_paged16_gqa4_d128_lens": (
        (8, 2, 128, 128, None, None, None, True), "f32",
        {"sq": 1, "block_size": 16, "lens": True},
        [(b, 1, sk, splits) for b, sk, splits in DECODE_SIZES]),
    "snk_specdec4_gqa4_d64_causal": (
        (8, 2, 64, 64, (-1, 0, True), None, None, True), "f32", {"sq": 4},
        [(2, 4, 239, 1), (2, 4, 239, 3), (3, 4, 777, 0)]),
    "snk_vl_gqa4_d128_causal_br": (
        (8, 2, 128, 128, (-1, 0, True), None, None, True), "f32",
        {"form": "packed_qkv"}, [(b, sq, sk, 0) for b, sq, sk in VARLEN_SIZES]),
}


# Quantized K/V caches on the decode tier (a last column
# "kv:FORMAT:SCALES", SCALES tensor, head, token or none): name ->
# (kernel as in KERNELS, FORMAT, SCALES, dict of spec()'s keywords,
# sizes (B, Sq, Sk, splits)). attn_gpu_test stores fresh bytes (any finite
# code) and scales; the reference reads their dequantized values.
QUANT_DECODE_SIZES = [(b, 1, sk, splits) for b, sk, splits in DECODE_SIZES]
QUANT_KERNELS = {
    "q8_dec_gqa4_d128_e4m3_tensor": (
        (8, 2, 128, 128, None, None, None, True), "f8E4M3FN", "tensor",
        {"sq": 1}, QUANT_DECODE_SIZES),
    "q8_dec_paged16_gqa4_d128_e4m3_token_lens": (
        (8, 2, 128, 128, (-1, 0, True), None, None, True), "f8E4M3FN",
        "token", {"sq": 1, "block_size": 16, "lens": True},
        QUANT_DECODE_SIZES),
    "q8_dec_gqa8_d128_e5m2_head_bf16": (
        (8, 1, 128, 128, None, None, None, True), "f8E5M2", "head",
        {"sq": 1, "dtype": "bf16"}, QUANT_DECODE_SIZES),
    "q8_dec_mha_d64_i8_token_softcap": (
        (4, 4, 64, 64, None, 0.1, 30.0, True), "i8", "token", {"sq": 1},
        QUANT_DECODE_SIZES),
    "q8_dec_paged1_gqa4_d64_i8_head": (
        (8, 2, 64, 64, None, None, None, False), "i8", "head",
        {"sq": 1, "block_size": 1}, QUANT_DECODE_SIZES),
    "q8_dec_gqa4_d48_e4m3_none": (
        (8, 2, 48, 48, None, None, None, True), "f8E4M3FN", "none", {"sq": 1},
        QUANT_DECODE_SIZES),
    "q8_specdec4_gqa4_d128_e4m3_token_causal": (
        (8, 2, 128, 128, (-1, 0, True), None, None, True), "f8E4M3FN",
        "token", {"sq": 4}, [(2, 4, 239, 1), (2, 4, 239, 3), (3, 4, 777, 0)]),
    "q8_vl_dec_gqa4_d128_e4m3_token": (
        (8, 2, 128, 128, (-1, 0, True), None, None, True), "f8E4M3FN",
        "token", {"form": "packed_qkv", "max_q_len": 1},
        [(b, 1, sk, splits) for b, sk, splits in VARLEN_DECODE_SIZES]),
    # Per tensor, per head or no scales, D a multiple of 64 and Dv of 32:
    # the tensor-core split kernel, its fragments decoded in registers
    # (16 rows: on sm_80 too, with fp8's bit operations).
    "q8_dec_gqa16_d128_e4m3_head": (
        (16, 1, 128, 128, None, None, None, True), "f8E4M3FN", "head",
        {"sq": 1}, QUANT_DECODE_SIZES),
    "q8_specdec4_gqa4_d128_i8_tensor_causal": (
        (8, 2, 128, 128, (-1, 0, True), None, None, True), "i8", "tensor",
        {"sq": 4}, [(2, 4, 239, 1), (2, 4, 239, 3), (3, 4, 777, 0)]),
    "q8_dec_gqa4_d256_e5m2_tensor_softcap": (
        (8, 2, 256, 256, None, 0.06, 30.0, True), "f8E5M2", "tensor",
        {"sq": 1}, QUANT_DECODE_SIZES),
    "q8_dec_gqa4_d128_dv64_i8_none_bf16": (
        (8, 2, 128, 64, None, None, None, False), "i8", "none",
        {"sq": 1, "dtype": "bf16"}, QUANT_DECODE_SIZES),
    "q8_dec_gqa16_d64_e4m3_tensor_bf16": (
        (16, 1, 64, 64, None, None, None, True), "f8E4M3FN", "tensor",
        {"sq": 1, "dtype": "bf16"}, QUANT_DECODE_SIZES),
    "q8_vl_dec_paged16_gqa4_d128_e4m3_head": (
        (8, 2, 128, 128, (-1, 0, True), None, None, True), "f8E4M3FN", "head",
        {"form": "packed_q", "block_size": 16, "lens": True, "max_q_len": 1},
        [(b, 1, sk, splits) for b, sk, splits in VARLEN_DECODE_SIZES]),
    "q8_vl_dec_paged16_gqa4_d128_i8_token": (
        (8, 2, 128, 128, (-1, 0, True), None, None, True), "i8", "token",
        {"form": "packed_q", "block_size": 16, "lens": True, "max_q_len": 1},
        [(b, 1, sk, splits) for b, sk, splits in VARLEN_DECODE_SIZES]),
}


def spec(name, hq, hkv, d, dv, mask, scale, softcap, lse, sq=None,
         block_size=0, lens=False, schedule=None, dtype="f16", form=None,
         max_q_len=None, sinks=None, kv=None):
    s = sq or "?"
    dtype, _, out_type = dtype.partition(":")  # "f16:f32": O in f32
    packed_q = form in ("packed_q", "packed_qkv")
    packed_kv = form in ("packed_kv", "packed_qkv")
    q = f"memref<?x{hq}x{s}x{d}x{dtype}>"
    rows = block_size or "?"
    kv_type, scales = kv or (dtype, "none")
    k = f"memref<?x{hkv}x{rows}x{d}x{kv_type}>"
    v = f"memref<?x{hkv}x{rows}x{dv}x{kv_type}>"
    o = f"memref<?x{hq}x{s}x{dv}x{out_type or dtype}>"
    l = f"memref<?x{hq}x{s}xf32>"
    if packed_q:
        q = f"memref<?x{hq}x{d}x{dtype}>"
        o = f"memref<?x{hq}x{dv}x{out_type or dtype}>"
        l = f"memref<?x{hq}xf32>"
    if packed_kv:
        k = f"memref<?x{hkv}x{d}x{kv_type}>"
        v = f"memref<?x{hkv}x{dv}x{kv_type}>"
    args = [f"%q: {q}", f"%k: {k}", f"%v: {v}"]
    op = f"  attn.attention q(%q : {q}) k(%k : {k}) v(%v : {v})"
    if packed_q:
        args.append("%cq: memref<?xi32>")
        op += " cu_seqlens_q(%cq : memref<?xi32>)"
    if packed_kv:
        args.append("%ck: memref<?xi32>")
        op += " cu_seqlens_k(%ck : memref<?xi32>)"
    if block_size:
        args.append("%bt: memref<?x?xi32>")
        op += " block_table(%bt : memref<?x?xi32>)"
    if block_size or lens:
        args.append("%lens: memref<?xi32>")
        op += " kv_lens(%lens : memref<?xi32>)"
    if sinks:
        args.append(f"%sinks: memref<{hq}x{sinks}>")
        op += f" sinks(%sinks : memref<{hq}x{sinks}>)"
    # A scale per tensor, per K/V head, or per token laid out like K
    # without D.
    scale_type = {"tensor": "memref<f32>", "head": f"memref<{hkv}xf32>",
                  "token": (f"memref<?x{hkv}xf32>" if packed_kv else
                            f"memref<?x{hkv}x{rows}xf32>")}.get(scales)
    if scale_type:
        args += [f"%ks: {scale_type}", f"%vs: {scale_type}"]
        op += f" k_scale(%ks : {scale_type}) v_scale(%vs : {scale_type})"
    args.append(f"%o: {o}")
    op += f"\n      -> o(%o : {o})"
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
    if max_q_len:
        op += f" max_q_len = {max_q_len}"
    if schedule:
        fields = zip(("block_q", "block_kv", "warps", "stages"), schedule)
        op += (" schedule = <" +
               ", ".join(f"{k} = {v}" for k, v in fields if v) + ">")
    return f"func.func @{name}({', '.join(args)}) {{\n{op}\n  return\n}}\n"


def main(out):
    os.makedirs(os.path.join(out, "specs"), exist_ok=True)
    lines = ["# spec ptx hq hkv d dv left right bottom_right scale softcap "
             "lse batch sq sk block_size lens splits [dtype [form "
             "[sinks:TYPE]]]"]
    prefill = [(name, kernel, "f16") for name, kernel in KERNELS.items()]
    prefill += [("bf16_" + name, KERNELS[name], "bf16")
                for name in BF16_KERNELS]
    prefill += [("o32_" + name, KERNELS[name], "f16:f32")
                for name in F32_OUT_KERNELS]
    prefill = [(name, kernel, dtype, None) for name, kernel, dtype in prefill]
    prefill += [(name, KERNELS[base], "f16", schedule)
                for name, (base, schedule) in SCHEDULED_KERNELS.items()]
    for name, kernel, dtype, schedule in prefill:
        hq, hkv, d, dv, mask, scale, softcap, lse = kernel
        with open(os.path.join(out, "specs", name + ".mlir"), "w") as f:
            f.write(spec(name, *kernel, schedule=schedule, dtype=dtype))
        left, right, br = mask if mask else (-1, -1, False)
        sc = scale if scale else d ** -0.5
        for b, sq, sk in SIZES:
            lines.append(f"{name} {name}.ptx {hq} {hkv} {d} {dv} {left} "
                         f"{right} {int(br)} {sc!r} {softcap or 0} {int(lse)} "
                         f"{b} {sq} {sk} 0 0 0 {dtype}")
    for name, (kernel, bs, lens, *rest) in PAGED_PREFILL_KERNELS.items():
        hq, hkv, d, dv, mask, scale, softcap, lse = kernel
        dtype = rest[0] if rest else "f16"
        with open(os.path.join(out, "specs", name + ".mlir"), "w") as f:
            f.write(spec(name, *kernel, block_size=bs, lens=lens,
                         dtype=dtype))
        left, right, br = mask if mask else (-1, -1, False)
        sc = scale if scale else d ** -0.5
        for b, sq, sk in PAGED_PREFILL_SIZES:
            lines.append(f"{name} {name}.ptx {hq} {hkv} {d} {dv} {left} "
                         f"{right} {int(br)} {sc!r} {softcap or 0} {int(lse)} "
                         f"{b} {sq} {sk} {bs} {int(lens)} 0 {dtype}")
    for name, kernel in DECODE_KERNELS.items():
        hq, hkv, d, dv, mask, scale, softcap, lse, sq, bs, lens = kernel[:11]
        dtype = kernel[12] if len(kernel) > 12 else "f16"
        with open(os.path.join(out, "specs", name + ".mlir"), "w") as f:
            f.write(spec(name, *kernel))
        left, right, br = mask if mask else (-1, -1, False)
        sc = scale if scale else d ** -0.5
        for b, sk, splits in DECODE_SIZES:
            lines.append(f"{name} {name}.ptx {hq} {hkv} {d} {dv} {left} "
                         f"{right} {int(br)} {sc!r} {softcap or 0} {int(lse)} "
                         f"{b} {sq} {sk} {bs} {int(lens)} {splits} {dtype}")
    for name, (kernel, form, bs, max_q_len, *rest) in VARLEN_KERNELS.items():
        hq, hkv, d, dv, mask, scale, softcap, lse = kernel
        dtype = rest[0] if rest else "f16"
        lens = form == "packed_q"  # kv_lens beside a contiguous or paged K/V
        with open(os.path.join(out, "specs", name + ".mlir"), "w") as f:
            f.write(spec(name, *kernel, block_size=bs, lens=lens, dtype=dtype,
                         form=form, max_q_len=max_q_len))
        left, right, br = mask if mask else (-1, -1, False)
        sc = scale if scale else d ** -0.5
        sizes = ([(b, max_q_len, sk, splits)
                  for b, sk, splits in VARLEN_DECODE_SIZES] if max_q_len else
                 [(b, sq, sk, 0) for b, sq, sk in VARLEN_SIZES])
        for b, sq, sk, splits in sizes:
            lines.append(f"{name} {name}.ptx {hq} {hkv} {d} {dv} {left} "
                         f"{right} {int(br)} {sc!r} {softcap or 0} {int(lse)} "
                         f"{b} {sq} {sk} {bs} {int(lens)} {splits} {dtype} "
                         f"{form}")
    # Sinks and quantized caches: spec() keywords beside the kernel, and a
    # last column naming what the case adds.
    grouped = [(name, kernel, {"sinks": sink_type, **extra}, sizes,
                f"sinks:{sink_type}")
               for name, (kernel, sink_type, extra, sizes)
               in SINK_KERNELS.items()]
    grouped += [(name, kernel, {"kv": (fmt, scales), **extra}, sizes,
                 f"kv:{fmt}:{scales}")
                for name, (kernel, fmt, scales, extra, sizes)
                in QUANT_KERNELS.items()]
    for name, kernel, extra, sizes, column in grouped:
        hq, hkv, d, dv, mask, scale, softcap, lse = kernel
        with open(os.path.join(out, "specs", name + ".mlir"), "w") as f:
            f.write(spec(name, *kernel, **extra))
        left, right, br = mask if mask else (-1, -1, False)
        sc = scale if scale else d ** -0.5
        bs = extra.get("block_size", 0)
        lens = int(extra.get("lens", False))
        dtype = extra.get("dtype", "f16")
        form = extra.get("form", "padded")
        for b, sq, sk, splits in sizes:
            lines.append(f"{name} {name}.ptx {hq} {hkv} {d} {dv} {left} "
                         f"{right} {int(br)} {sc!r} {softcap or 0} {int(lse)} "
                         f"{b} {sq} {sk} {bs} {lens} {splits} {dtype} {form} "
                         f"{column}")
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    bench = lines[:1]
    for name, (kernel, sizes) in BENCH_KERNELS.items():
        hq, hkv, d, dv, mask, scale, softcap, lse = kernel[:8]
        with open(os.path.join(out, "specs", name + ".mlir"), "w") as f:
            f.write(spec(name, *kernel[:13],
                         form=kernel[13] if len(kernel) > 13 else None))
        left, right, br = mask if mask else (-1, -1, False)
        dtype = kernel[12] if len(kernel) > 12 else "f16"
        bs = kernel[9] if len(kernel) > 9 else 0
        form = " " + kernel[13] if len(kernel) > 13 else ""
        for b, sq, sk in sizes:
            bench.append(f"{name} {name}.ptx {hq} {hkv} {d} {dv} {left} "
                         f"{right} {int(br)} {d ** -0.5!r} 0 0 {b} {sq} {sk} "
                         f"{bs} 0 0 {dtype}{form}")
    # Attention sinks' cost: the same shapes with sinks (f32).
    for name, base in SINK_BENCH.items():
        kernel, sizes = BENCH_KERNELS[base]
        with open(os.path.join(out, "specs", name + ".mlir"), "w") as f:
            f.write(spec(name, *kernel[:13],
                         form=kernel[13] if len(kernel) > 13 else None,
                         sinks="f32"))
        bench += [line.replace(f"{base} {base}.ptx ", f"{name} {name}.ptx ")
                  + " sinks:f32" for line in bench
                  if line.startswith(f"{base} {base}.ptx ")]
    for table, scales in ((QUANT_BENCH, "token"),
                          (QUANT_TENSOR_BENCH, "tensor")):
        for name, (fmt, bs, sizes) in table.items():
            kernel = (32, 8, 128, 128, None, None, None, False)
            with open(os.path.join(out, "specs", name + ".mlir"), "w") as f:
                f.write(spec(name, *kernel, sq=1, block_size=bs,
                             kv=(fmt, scales)))
            for b, sq, sk in sizes:
                bench.append(f"{name} {name}.ptx 32 8 128 128 -1 -1 0 "
                             f"{128 ** -0.5!r} 0 0 {b} {sq} {sk} {bs} 0 0 f16 "
                             f"padded kv:{fmt}:{scales}")
    # f16 at B8 Sk16k, the quantized rows' middle shape.
    bench.append("bench_dec_h32_kv8_d128 bench_dec_h32_kv8_d128.ptx 32 8 128 "
                 f"128 -1 -1 0 {128 ** -0.5!r} 0 0 8 1 16384 0 0 0 f16")
    # The decode split count against a fixed one, to see the heuristic's cost.
    bench.append("bench_dec_h32_kv8_d128 bench_dec_h32_kv8_d128.ptx 32 8 128 "
                 f"128 -1 -1 0 {128 ** -0.5!r} 0 0 1 1 131072 0 0 264")
    with open(os.path.join(out, "bench.txt"), "w") as f:
        f.write("\n".join(bench) + "\n")
    # Cache appends: append_cases.txt (checked, and memcheck runs them all)
    # and append_bench.txt, for `attn_gpu_test append|append-bench`.
    append = ["# spec ptx hkv d dv dtype block_size new_lens batch s_new "
              "kv_len form (slots: batch = N blocks, s_new = T, kv_len = R)"]
    for name, kernel in APPEND_KERNELS.items():
        with open(os.path.join(out, "specs", name + ".mlir"), "w") as f:
            f.write(append_spec(name, *kernel))
        sizes = (APPEND_SLOT_SIZES[name] if name in APPEND_SLOT_SIZES else
                 APPEND_DECODE_SIZES if kernel[4] == 1 else APPEND_CHUNK_SIZES)
        append += [append_line(name, kernel, size) for size in sizes]
    with open(os.path.join(out, "append_cases.txt"), "w") as f:
        f.write("\n".join(append) + "\n")
    append_bench = append[:1] + [append_line(name, APPEND_KERNELS[name], size)
                                 for name, size in APPEND_BENCH]
    with open(os.path.join(out, "append_bench.txt"), "w") as f:
        f.write("\n".join(append_bench) + "\n")
    print(f"{len(prefill) + len(PAGED_PREFILL_KERNELS) + len(DECODE_KERNELS) + len(VARLEN_KERNELS) + len(SINK_KERNELS) + len(QUANT_KERNELS)}"
          f" kernels, {len(lines) - 1} cases in {out}; {len(APPEND_KERNELS)} "
          f"append kernels, {len(append) - 1} cases")


if __name__ == "__main__":
    main(sys.argv[1])
